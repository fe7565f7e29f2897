package memshare

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Lease states a donor reports.
const (
	LeaseActive     = "active"
	LeaseReclaiming = "reclaiming" // re-home the slab elsewhere, then release it
)

// Lease is a donor's grant of one slab.
type Lease struct {
	ID      string    `json:"id"`
	Token   string    `json:"token"` // the NBD export name
	Size    uint64    `json:"size"`
	Expires time.Time `json:"expires"`
	State   string    `json:"state"`
	// Session, when the donor offers it, is a session token: one NBD
	// connection to it reaches every slab this consumer leases there,
	// this one at offsets [SessionBase, SessionBase+Size).
	Session     string `json:"session,omitempty"`
	SessionBase uint64 `json:"session_base,omitempty"`
}

// DonorStatus is a donor's advertised state.
type DonorStatus struct {
	Node      string `json:"node"`
	SlabSize  uint64 `json:"slab_size"`
	Capacity  int64  `json:"capacity_bytes"`
	Used      int64  `json:"used_bytes"`
	Free      int64  `json:"free_bytes"`
	Accepting bool   `json:"accepting"`
}

// APIToken derives the lease API's bearer token from the shared key, so
// the key itself never travels.
func APIToken(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("memshare-api-v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// APIClient talks to one donor's lease API.
type APIClient struct {
	base  string
	token string
	http  *http.Client
}

// NewAPIClient returns a client for addr (host:port); tlsCfg enables HTTPS.
func NewAPIClient(addr string, key []byte, tlsCfg *tls.Config) *APIClient {
	scheme := "http"
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	if tlsCfg != nil {
		scheme, tr.TLSClientConfig = "https", tlsCfg
	}
	return &APIClient{
		base:  scheme + "://" + addr,
		token: APIToken(key),
		http:  &http.Client{Timeout: 5 * time.Second, Transport: tr},
	}
}

// Status fetches the donor's capacity.
func (c *APIClient) Status(ctx context.Context) (DonorStatus, error) {
	var s DonorStatus
	return s, c.call(ctx, http.MethodGet, "/v1/status", nil, &s)
}

// Grant leases one slab for consumer.
func (c *APIClient) Grant(ctx context.Context, consumer string) (Lease, error) {
	var l Lease
	return l, c.call(ctx, http.MethodPost, "/v1/leases", map[string]string{"consumer": consumer}, &l)
}

// Renew extends a lease and returns its fresh token and state.
func (c *APIClient) Renew(ctx context.Context, id string) (Lease, error) {
	var l Lease
	return l, c.call(ctx, http.MethodPost, "/v1/leases/"+id+"/renew", nil, &l)
}

// Release frees a lease.
func (c *APIClient) Release(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/v1/leases/"+id, nil, nil)
}

// APIError is a non-2xx answer.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string { return fmt.Sprintf("donor API: %d: %s", e.Status, e.Msg) }

func (c *APIClient) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Status: resp.StatusCode, Msg: string(bytes.TrimSpace(data))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}
