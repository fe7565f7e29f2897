package live

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// The scheduler's client asks Nomad for uncompressed responses, over
// plain HTTP and over TLS with the CA from its config, and still sends
// the token and reads the answer.
func TestNomadClientAsksForNoCompression(t *testing.T) {
	for _, secure := range []bool{false, true} {
		var mu sync.Mutex
		var enc, tok []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			enc, tok = append(enc, r.Header.Get("Accept-Encoding")), append(tok, r.Header.Get("X-Nomad-Token"))
			mu.Unlock()
			w.Header().Set("X-Nomad-Index", "7")
			_, _ = w.Write([]byte(`[{"ID":"j1","Name":"j1"}]`))
		})
		cfg := api.DefaultConfig()
		var srv *httptest.Server
		if secure {
			srv = httptest.NewTLSServer(h)
			ca := filepath.Join(t.TempDir(), "ca.pem")
			pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			if err := os.WriteFile(ca, pemCert, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg.TLSConfig = &api.TLSConfig{CACert: ca}
		} else {
			srv = httptest.NewServer(h)
		}
		cfg.Address, cfg.SecretID = srv.URL, "secret"
		c, err := NewNomadClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _, err := c.Jobs().List(nil)
		srv.Close()
		if err != nil || len(jobs) != 1 || jobs[0].ID != "j1" {
			t.Fatalf("tls=%v: jobs %v, err %v", secure, jobs, err)
		}
		if len(enc) != 1 || enc[0] != "" || tok[0] != "secret" {
			t.Fatalf("tls=%v: Accept-Encoding %q, token %q; want none and the token", secure, enc, tok)
		}
	}
}

// A bad TLS setting is an error naming TLS, not a client that fails later.
func TestNomadClientRefusesBadTLS(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.Address = "https://127.0.0.1:1"
	cfg.TLSConfig = &api.TLSConfig{ClientCert: "/nonexistent/cert.pem"}
	if _, err := NewNomadClient(cfg); err == nil {
		t.Fatal("a client cert without its key was accepted")
	}
}
