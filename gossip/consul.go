package gossip

import (
	"fmt"
	"net"
	"strconv"

	consul "github.com/hashicorp/consul/api"
)

// DefaultConsulService is the Consul service members register under.
const DefaultConsulService = "caravan-gossip"

type consulReg struct {
	client *consul.Client
	id     string
}

func (m *Member) consulClient() (*consul.Client, error) {
	cc := consul.DefaultConfig()
	if m.cfg.ConsulAddress != "" {
		cc.Address = m.cfg.ConsulAddress
	}
	if m.cfg.ConsulToken != "" {
		cc.Token = m.cfg.ConsulToken
	}
	return consul.NewClient(cc)
}

// consulJoinAddrs registers this member (node agents only) and returns
// the gossip addresses of the others registered under the service. The
// registration carries only an address: membership itself is still
// authenticated by the gossip key.
func (m *Member) consulJoinAddrs() ([]string, error) {
	c, err := m.consulClient()
	if err != nil {
		return nil, fmt.Errorf("consul: %w", err)
	}
	self := m.ml.LocalNode()
	if !m.cfg.Observer {
		id := m.cfg.ConsulService + "-" + m.cfg.Name
		reg := &consul.AgentServiceRegistration{
			ID: id, Name: m.cfg.ConsulService,
			Address: self.Addr.String(), Port: int(self.Port),
			Meta: map[string]string{"node": m.cfg.Name},
		}
		if err := c.Agent().ServiceRegister(reg); err != nil {
			return nil, fmt.Errorf("consul: registering %s: %w", m.cfg.ConsulService, err)
		}
		m.consul = &consulReg{client: c, id: id}
	}
	entries, _, err := c.Health().Service(m.cfg.ConsulService, "", false, nil)
	if err != nil {
		return nil, fmt.Errorf("consul: looking up %s: %w", m.cfg.ConsulService, err)
	}
	var addrs []string
	for _, e := range entries {
		if e.Service == nil || e.Service.Meta["node"] == m.cfg.Name {
			continue
		}
		host := e.Service.Address
		if host == "" && e.Node != nil {
			host = e.Node.Address
		}
		addrs = append(addrs, net.JoinHostPort(host, strconv.Itoa(e.Service.Port)))
	}
	m.log.Info("found gossip members in Consul", "service", m.cfg.ConsulService, "count", len(addrs))
	return addrs, nil
}

func (m *Member) consulDeregister() {
	if m.consul == nil {
		return
	}
	if err := m.consul.client.Agent().ServiceDeregister(m.consul.id); err != nil {
		m.log.Warn("consul: deregistering", "id", m.consul.id, "error", err)
	}
}
