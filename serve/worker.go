package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// WorkItem is one request inside a batch sent to a worker.
type WorkItem struct {
	ID        string `json:"id"`
	Tokens    []int  `json:"tokens,omitempty"`
	InputLen  int    `json:"input_len"`
	MaxTokens int    `json:"max_tokens"`
}

// Worker runs batches of one model. Run returns one output per item, in order.
type Worker interface {
	Addr() string
	Run(ctx context.Context, model string, items []WorkItem) ([]json.RawMessage, error)
}

// batchRequest and batchResponse are the worker protocol: POST /v1/batch
// with "Authorization: Bearer <token>" on the worker's loopback or alloc
// address.
type batchRequest struct {
	Model string     `json:"model"`
	Items []WorkItem `json:"items"`
}

type batchResponse struct {
	Outputs []json.RawMessage `json:"outputs"`
	ExecMS  float64           `json:"exec_ms"`
	Error   string            `json:"error,omitempty"`
}

// maxWorkerReply bounds what a worker may send back.
const maxWorkerReply = 64 << 20

// HTTPWorker talks to a Python model worker (workloads/serve/worker.py).
type HTTPWorker struct {
	addr, token string
	client      *http.Client
}

// NewHTTPWorker returns a client for the worker at host:port.
func NewHTTPWorker(addr, token string, client *http.Client) *HTTPWorker {
	if client == nil {
		client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}}
	}
	return &HTTPWorker{addr: addr, token: token, client: client}
}

func (w *HTTPWorker) Addr() string { return w.addr }

func (w *HTTPWorker) Run(ctx context.Context, model string, items []WorkItem) ([]json.RawMessage, error) {
	body, err := json.Marshal(batchRequest{Model: model, Items: items})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+w.addr+"/v1/batch", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", w.addr, err)
	}
	defer resp.Body.Close()
	var br batchResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxWorkerReply)).Decode(&br); err != nil {
		return nil, fmt.Errorf("worker %s: status %d, unreadable reply: %w", w.addr, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("worker %s: status %d: %s", w.addr, resp.StatusCode, br.Error)
	}
	if len(br.Outputs) != len(items) {
		return nil, fmt.Errorf("worker %s: %d outputs for %d items", w.addr, len(br.Outputs), len(items))
	}
	return br.Outputs, nil
}
