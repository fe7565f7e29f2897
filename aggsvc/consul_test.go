package aggsvc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// fakeAgent records what RegisterConsul sends to Consul's agent API.
type fakeAgent struct {
	mu      sync.Mutex
	regs    []consul.AgentServiceRegistration
	deregID string
}

func (f *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/agent/service/register":
		var reg consul.AgentServiceRegistration
		if err := json.NewDecoder(r.Body).Decode(&reg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.regs = append(f.regs, reg)
	case strings.HasPrefix(r.URL.Path, "/v1/agent/service/deregister/"):
		f.deregID = strings.TrimPrefix(r.URL.Path, "/v1/agent/service/deregister/")
	default:
		http.NotFound(w, r)
	}
}

// TestRegisterConsul: the instance registers with its address, a health
// check and its load in the meta, refreshes the meta, and deregisters when
// it stops.
func TestRegisterConsul(t *testing.T) {
	s := startServer(t, nil)
	agent := &fakeAgent{}
	hs := httptest.NewServer(agent)
	defer hs.Close()
	dialWorker(t, []string{s.Addr().String()}, "default/meta", 0, 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- s.RegisterConsul(ctx, ConsulConfig{Address: strings.TrimPrefix(hs.URL, "http://"),
			Advertise: "127.0.0.1:7070", HealthURL: "http://127.0.0.1:7071/healthz", Every: 10 * time.Millisecond})
	}()
	waitFor(t, func() bool { agent.mu.Lock(); defer agent.mu.Unlock(); return len(agent.regs) >= 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	reg := agent.regs[len(agent.regs)-1]
	if reg.Name != ServiceName || reg.Address != "127.0.0.1" || reg.Port != 7070 {
		t.Fatalf("registration %+v", reg)
	}
	if reg.Check == nil || reg.Check.HTTP != "http://127.0.0.1:7071/healthz" {
		t.Fatalf("health check %+v", reg.Check)
	}
	if reg.Meta["jobs"] != "1" || reg.Meta["cores"] != "2" || reg.Meta["cores_busy"] == "" {
		t.Fatalf("load meta %v", reg.Meta)
	}
	if agent.deregID != reg.ID {
		t.Fatalf("deregistered %q, registered %q", agent.deregID, reg.ID)
	}
}
