package live

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// NewNomadClient is the scheduler's Nomad API client: cfg's address,
// token and TLS settings (api.DefaultConfig reads them from NOMAD_*), with
// responses sent uncompressed.
//
// Why uncompressed: the api package asks for gzip on every request, and
// Nomad's HTTP server then builds a new compressor (~1 MB of allocation)
// for every response, however small. The scheduler's calls are many and
// small (a register, a job read, a few hundred bytes of a progress file)
// and go to a server in the same datacenter; at 1,000 nodes × 10,000 jobs
// those compressors were 5 % of the Nomad server's CPU samples and much of
// its garbage, and their readers 12 % of what the scheduler allocated.
// A unix-socket address keeps the api package's own client.
func NewNomadClient(cfg *api.Config) (*api.Client, error) {
	if cfg.HttpClient == nil && !strings.HasPrefix(cfg.Address, "unix://") {
		hc, err := plainHTTPClient(cfg.TLSConfig)
		if err != nil {
			return nil, fmt.Errorf("nomad client TLS: %w", err)
		}
		cfg.HttpClient = hc
	}
	return api.NewClient(cfg)
}

// plainHTTPClient is the api package's default client (pooled
// connections, HTTP/1.1, TLS 1.2 or newer, tlsc applied) that never asks
// for a compressed response.
func plainHTTPClient(tlsc *api.TLSConfig) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32 // admissions, progress reads, the stream and saves at once
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	tr.ForceAttemptHTTP2 = false // as the api package: exec and websockets want HTTP/1
	tr.DisableCompression = true
	hc := &http.Client{Transport: tr}
	if err := api.ConfigureTLS(hc, tlsc); err != nil {
		return nil, err
	}
	hc.Transport = identityEncoding{tr}
	return hc, nil
}

// identityEncoding drops the Accept-Encoding header the api package sets,
// so the server answers uncompressed.
type identityEncoding struct{ next http.RoundTripper }

func (t identityEncoding) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Accept-Encoding") == "" {
		return t.next.RoundTrip(r)
	}
	c := *r // a RoundTripper must not change the caller's request
	c.Header = r.Header.Clone()
	c.Header.Del("Accept-Encoding")
	return t.next.RoundTrip(&c)
}
