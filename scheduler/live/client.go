package live

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// QueueClient reads a scheduler's queue over its HTTP API.
type QueueClient struct {
	// Addr is a URL ("https://host:port") or a bare "host:port" as
	// `nomad service info` prints it (https when CACert is set).
	Addr  string
	Token string
	// CACert is a PEM file of the CA that signed the scheduler's TLS
	// certificate ("" = plain HTTP, or the system roots for https URLs).
	CACert string
}

// FetchQueue reads GET /v1/queue from a scheduler without TLS settings.
func FetchQueue(ctx context.Context, addr, token string) (*QueueView, []byte, error) {
	return QueueClient{Addr: addr, Token: token}.Fetch(ctx)
}

// URL is the API base URL Addr names.
func (c QueueClient) URL() string {
	a := strings.TrimRight(strings.TrimSpace(c.Addr), "/")
	if strings.Contains(a, "://") {
		return a
	}
	if c.CACert != "" {
		return "https://" + a
	}
	return "http://" + a
}

// Fetch reads GET /v1/queue.
func (c QueueClient) Fetch(ctx context.Context) (*QueueView, []byte, error) {
	hc, err := c.httpClient()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL()+"/v1/queue", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler address %q: %w", c.Addr, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	var v QueueView
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, fmt.Errorf("bad response: %w", err)
	}
	return &v, raw, nil
}

func (c QueueClient) httpClient() (*http.Client, error) {
	if c.CACert == "" {
		return http.DefaultClient, nil
	}
	pem, err := os.ReadFile(c.CACert)
	if err != nil {
		return nil, fmt.Errorf("ca-cert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca-cert: %s holds no PEM certificate", c.CACert)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr}, nil
}

// PrintQueue renders a queue as a table.
func PrintQueue(w io.Writer, v *QueueView) {
	role := "standby"
	if v.Leader {
		role = "leader"
	}
	fmt.Fprintf(w, "policy %s (%s)\n", v.Policy, role)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tRANK\tQUEUE\tGPUS\tATTAINED(GPU·s)\tWAIT(s)\tPREEMPT\tSTEP\tLOSS\tREASON/PLACEMENT")
	for _, j := range v.Jobs {
		rk := "-"
		if j.Rank >= 0 {
			rk = fmt.Sprint(j.Rank)
		}
		why, state := j.Reason, j.State
		if j.State == "running" {
			why = j.Placement
		}
		if j.Parked {
			state = "parked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.1f\t%.0f\t%d\t%s\t%s\t%s\n", j.ID, state, rk, j.Queue,
			gpus(j), j.Attained, j.WaitSeconds, j.Preemptions, num(j.Step), num(j.Loss), why)
	}
	tw.Flush()
}

// gpus prints a gang's shape, "-" when unknown.
func gpus(j QueueJob) string {
	if j.Workers == 0 {
		return "-"
	}
	return fmt.Sprintf("%d×%g", j.Workers, j.Fraction)
}

// num prints an optional number, "-" when absent.
func num(x *float64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'g', 4, 64)
}
