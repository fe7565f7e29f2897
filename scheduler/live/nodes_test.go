package live

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func TestParseNodeReadsCaravanFingerprint(t *testing.T) {
	n := &api.Node{ID: "id1", Name: "n", NodePool: "default", Drivers: map[string]*api.DriverInfo{"caravan": {Attributes: map[string]string{
		gpuAttr + "count":  "3",
		gpuAttr + "0.uuid": "GPU-0", gpuAttr + "0.memory_mib": "40960", "unique." + gpuAttr + "0.free_fraction": "0.75", "unique." + gpuAttr + "0.free_memory_mib": "30000",
		gpuAttr + "1.uuid": "GPU-1", gpuAttr + "1.memory_mib": "40960",
		gpuAttr + "2.uuid": "GPU-2", gpuAttr + "2.memory_mib": "40960", gpuAttr + "2.free_fraction": "0.5", // an older driver's name
	}}}}
	info, err := parseNode(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.GPUs) != 3 || info.GPUs[0].FreeFraction != 0.75 || info.GPUs[0].FreeMemMiB != 30000 || info.GPUs[1].FreeFraction != 1 ||
		info.GPUs[1].UUID != "GPU-1" || info.GPUs[2].FreeFraction != 0.5 {
		t.Fatalf("parsed %+v", info)
	}
	n.Drivers["caravan"].Attributes[gpuAttr+"1.memory_mib"] = "lots"
	if _, err := parseNode(n); err == nil || !strings.Contains(err.Error(), "memory_mib") {
		t.Fatalf("bad memory accepted: %v", err)
	}
	none, err := parseNode(&api.Node{ID: "x"})
	if err != nil || len(none.GPUs) != 0 {
		t.Fatalf("node without the driver: %+v %v", none, err)
	}
}

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.Token = "t"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults with a token: %v", err)
	}
	c.Token, c.Pool, c.LockTTL, c.QueueLimits, c.TLSCertFile = "", c.QueuePool, 0, []float64{5, 3}, "cert.pem"
	err := c.Validate()
	for _, want := range []string{"token", "both", "TTL", "increasing", "tls-key"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v should mention %q", err, want)
		}
	}
}

func TestRecordAccruesOnlyWhileRunning(t *testing.T) {
	r := &record{}
	r.accrue(10, 2) // starts the clock
	r.accrue(13, 2)
	r.pause()
	r.accrue(20, 2) // restarts the clock, adds nothing
	r.accrue(21, 2)
	if r.Executed != 4 || r.Attained != 8 {
		t.Fatalf("executed %v attained %v, want 4 and 8", r.Executed, r.Attained)
	}
	s := newState()
	for i := 0; i < 5; i++ {
		s.log(3, decision{Job: string(rune('a' + i))})
	}
	if len(s.Decisions) != 3 || s.Decisions[0].Job != "c" {
		t.Fatalf("decision log %+v", s.Decisions)
	}
}
