package driver

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/aggsvc/auth"
	consul "github.com/hashicorp/consul/api"
)

// aggregatorLookupTimeout bounds the Consul query so a dead Consul fails
// StartTask quickly with a clear message instead of hanging it.
const aggregatorLookupTimeout = 10 * time.Second

// serviceResolver finds the addresses of a service's healthy instances.
type serviceResolver interface {
	Resolve(ctx context.Context, service string) ([]string, error)
}

// consulResolver asks Consul's health endpoint for passing instances.
type consulResolver struct {
	client  *consul.Client
	address string
}

// newConsulResolver uses address and token when set, else Consul's own
// defaults (CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, 127.0.0.1:8500).
func newConsulResolver(address, token string) (*consulResolver, error) {
	cfg := consul.DefaultConfig()
	if address != "" {
		cfg.Address = address
	}
	if token != "" {
		cfg.Token = token
	}
	client, err := consul.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("consul_address: %w", err)
	}
	return &consulResolver{client: client, address: cfg.Address}, nil
}

func (r *consulResolver) Resolve(ctx context.Context, service string) ([]string, error) {
	q := (&consul.QueryOptions{AllowStale: true}).WithContext(ctx)
	entries, _, err := r.client.Health().Service(service, "", true, q)
	if err != nil {
		return nil, fmt.Errorf("looking up Consul service %q at %s: %w", service, r.address, err)
	}
	var addrs []string
	for _, e := range entries {
		if a := entryAddress(e); a != "" {
			addrs = append(addrs, a)
		}
	}
	sort.Strings(addrs)
	return addrs, nil
}

// entryAddress prefers the service's own address, as Consul DNS does.
func entryAddress(e *consul.ServiceEntry) string {
	if e.Service == nil || e.Service.Port == 0 {
		return ""
	}
	host := e.Service.Address
	if host == "" && e.Node != nil {
		host = e.Node.Address
	}
	if host == "" {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(e.Service.Port))
}

// aggregatorEnv resolves the task's aggregator service. The job key lets a
// shared aggregator tell which workers aggregate together.
func (d *Driver) aggregatorEnv(service, namespace, jobID string) (map[string]string, error) {
	if service == "" {
		return nil, nil
	}
	r, err := d.resolver()
	if err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	ctx, cancel := context.WithTimeout(d.ctx, aggregatorLookupTimeout)
	defer cancel()
	addrs, err := r.Resolve(ctx, service)
	if err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("aggregator: Consul has no healthy instance of service %q; is the aggregation service running?", service)
	}
	if namespace == "" {
		namespace = "default"
	}
	env := map[string]string{
		"CARAVAN_AGGREGATOR_SERVICE": service,
		"CARAVAN_AGGREGATOR_ADDRS":   strings.Join(addrs, ","),
		"CARAVAN_AGGREGATOR_JOB":     namespace + "/" + jobID,
	}
	if key := d.aggregatorKey(); key != "" {
		env["CARAVAN_AGGREGATOR_TOKEN"] = auth.JobToken([]byte(key), env["CARAVAN_AGGREGATOR_JOB"])
	}
	return env, nil
}

// aggregatorKey is the aggsvc signing key: the plugin config's, else the
// plugin process's $CARAVAN_AGGSVC_KEY.
func (d *Driver) aggregatorKey() string {
	d.mu.RLock()
	key := d.config.AggregatorKey
	d.mu.RUnlock()
	if key == "" {
		key = os.Getenv(auth.KeyEnv)
	}
	return key
}

// resolver returns the injected resolver or one for the configured Consul.
func (d *Driver) resolver() (serviceResolver, error) {
	if d.opts.resolver != nil {
		return d.opts.resolver, nil
	}
	d.mu.RLock()
	addr, token := d.config.ConsulAddress, d.config.ConsulToken
	d.mu.RUnlock()
	return newConsulResolver(addr, token)
}
