package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// fingerprintPeriod re-sends the fingerprint even without ledger changes,
// so the free numbers Nomad shows never go stale for long.
const fingerprintPeriod = 30 * time.Second

const attrPrefix = "driver.caravan.gpu."

// usagePrefix names the attributes that change with every grant. Nomad
// leaves "unique." keys out of a node's computed class; with the free
// numbers in the class, every task start or end gave the node a class no
// blocked evaluation had seen, and Nomad re-ran every blocked evaluation
// (caravan's parked jobs included: scheduler/live/park.go) on each one.
const usagePrefix = "unique." + attrPrefix

// Fingerprint streams the node's GPU attributes, at once, periodically,
// and whenever a grant is taken or released.
func (d *Driver) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	ch := make(chan *drivers.Fingerprint)
	go d.fingerprintLoop(ctx, ch)
	return ch, nil
}

func (d *Driver) fingerprintLoop(ctx context.Context, ch chan<- *drivers.Fingerprint) {
	defer close(ch)
	ticker := time.NewTicker(fingerprintPeriod)
	defer ticker.Stop()
	for {
		changed := d.changed.wait() // before building, so no change is missed
		select {
		case ch <- d.buildFingerprint():
		case <-ctx.Done():
			return
		case <-d.ctx.Done():
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-d.ctx.Done():
			return
		case <-ticker.C:
		case <-changed:
		}
	}
}

func (d *Driver) buildFingerprint() *drivers.Fingerprint {
	node, _, err := d.gpus()
	if err != nil {
		return &drivers.Fingerprint{Health: drivers.HealthStateUndetected, HealthDescription: err.Error()}
	}
	attrs := map[string]*pstructs.Attribute{
		"driver.caravan":         pstructs.NewBoolAttribute(true),
		attrPrefix + "backend":   pstructs.NewStringAttribute(node.inv.Backend()),
		attrPrefix + "count":     pstructs.NewIntAttribute(int64(len(node.devices)), ""),
		"driver.caravan.version": pstructs.NewStringAttribute(PluginVersion),
		// "chroot" (the default) or "none" (no_isolation = true).
		"driver.caravan.isolation": pstructs.NewStringAttribute(node.isolation),
	}
	usage := map[string]ledger.Usage{}
	if node.ledger != nil {
		for _, u := range node.ledger.Usage() {
			usage[u.UUID] = u
		}
	}
	for _, dev := range node.devices {
		p := fmt.Sprintf("%s%d.", attrPrefix, dev.Index)
		attrs[p+"uuid"] = pstructs.NewStringAttribute(dev.UUID)
		attrs[p+"model"] = pstructs.NewStringAttribute(dev.Model)
		attrs[p+"memory_mib"] = pstructs.NewIntAttribute(int64(dev.MemoryMiB), "")
		u, ok := usage[dev.UUID]
		if !ok {
			u = ledger.Usage{TotalMiB: dev.MemoryMiB}
		}
		up := fmt.Sprintf("%s%d.", usagePrefix, dev.Index)
		attrs[up+"free_fraction"] = pstructs.NewFloatAttribute(round3(u.FreeFraction()), "")
		attrs[up+"free_memory_mib"] = pstructs.NewIntAttribute(int64(u.FreeMiB()), "")
	}
	return &drivers.Fingerprint{Attributes: attrs, Health: node.health, HealthDescription: node.healthDesc}
}

// round3 keeps float sums like 1-0.7 from showing as 0.30000000000000004.
func round3(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}
