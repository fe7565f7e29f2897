package aggsvc

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// ServiceName is the Consul service aggsvc registers as; tasks find it with
// `aggregator = "caravan-aggsvc"` in the caravan driver.
const ServiceName = "caravan-aggsvc"

// ConsulConfig shapes the Consul registration.
type ConsulConfig struct {
	Address string // Consul HTTP address; empty means CONSUL_HTTP_ADDR or 127.0.0.1:8500
	Token   string
	Service string // default ServiceName
	// Advertise is the host:port workers dial (the aggregation listener).
	Advertise string
	// HealthURL is the HTTP URL Consul polls (the /healthz endpoint).
	HealthURL string
	// Every is how often the load in the service meta is refreshed (10s).
	Every time.Duration
}

// RegisterConsul registers the instance with a health check and its load in
// the meta, refreshes the load until ctx ends, then deregisters.
func (s *Server) RegisterConsul(ctx context.Context, cc ConsulConfig) error {
	cfg := consul.DefaultConfig()
	if cc.Address != "" {
		cfg.Address = cc.Address
	}
	if cc.Token != "" {
		cfg.Token = cc.Token
	}
	if cc.Service == "" {
		cc.Service = ServiceName
	}
	if cc.Every <= 0 {
		cc.Every = 10 * time.Second
	}
	client, err := consul.NewClient(cfg)
	if err != nil {
		return fmt.Errorf("consul: %w", err)
	}
	host, port, err := splitHostPort(cc.Advertise)
	if err != nil {
		return fmt.Errorf("consul: advertise: %w", err)
	}
	reg := &consul.AgentServiceRegistration{
		ID: cc.Service + "-" + host + "-" + strconv.Itoa(port), Name: cc.Service, Address: host, Port: port,
		Tags: []string{"aggsvc", "v" + strconv.Itoa(ProtocolVersion)},
		Check: &consul.AgentServiceCheck{HTTP: cc.HealthURL, Interval: "5s", Timeout: "2s",
			DeregisterCriticalServiceAfter: "1m"},
	}
	agent := client.Agent()
	var lastCPU float64
	last := time.Now()
	tick := time.NewTicker(cc.Every)
	defer tick.Stop()
	for {
		cpu := s.poolCPUSeconds()
		reg.Meta = s.loadMeta((cpu - lastCPU) / time.Since(last).Seconds())
		lastCPU, last = cpu, time.Now()
		if err := agent.ServiceRegister(reg); err != nil {
			s.log.Warn("consul registration failed; retrying", "error", err)
		}
		select {
		case <-ctx.Done():
			return agent.ServiceDeregister(reg.ID)
		case <-tick.C:
		}
	}
}

// loadMeta is the service meta: what a placement or an operator needs to
// pick the least loaded instance.
func (s *Server) loadMeta(coresBusy float64) map[string]string {
	l := s.Load()
	return map[string]string{
		"cores":      strconv.Itoa(s.cfg.Cores),
		"cores_busy": strconv.FormatFloat(coresBusy, 'f', 3, 64),
		"jobs":       strconv.Itoa(l.Jobs),
		"conns":      strconv.Itoa(l.Conns),
		"queued":     strconv.Itoa(l.Queued),
		"mem_bytes":  strconv.FormatInt(l.MemUsed, 10),
	}
}

func (s *Server) poolCPUSeconds() float64 {
	return float64(s.cpuNanos.Load()) / 1e9
}

func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return "", 0, fmt.Errorf("port %q", p)
	}
	return h, n, nil
}
