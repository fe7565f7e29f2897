package donor

import (
	"github.com/caravan-dl/caravan/memshare/nbd"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	used, leases                                            prometheus.Gauge
	granted, refused, expired, reclaimed, forced, badTokens prometheus.Counter
	nbd                                                     *nbd.Metrics
}

func newMetrics(reg prometheus.Registerer) *metrics {
	ns, sub := "caravan", "memshare_donor"
	g := func(name, help string) prometheus.Gauge {
		m := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
		reg.MustRegister(m)
		return m
	}
	c := func(name, help string) prometheus.Counter {
		m := prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
		reg.MustRegister(m)
		return m
	}
	return &metrics{
		used:      g("used_bytes", "Bytes of slabs leased out."),
		leases:    g("leases", "Live leases."),
		granted:   c("leases_granted_total", "Leases granted."),
		refused:   c("leases_refused_total", "Lease requests refused for lack of capacity."),
		expired:   c("leases_expired_total", "Leases freed because they were not renewed."),
		reclaimed: c("slabs_reclaimed_total", "Slabs marked for reclaim because the donor needs memory."),
		forced:    c("slabs_force_freed_total", "Reclaimed slabs freed before their consumer moved them."),
		badTokens: c("bad_tokens_total", "NBD connections refused for a forged, expired or unknown token."),
		nbd:       nbd.NewMetrics(reg, ns, sub+"_nbd"),
	}
}
