package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Request is the JSON body of POST /v1/models/{model}/infer.
type Request struct {
	// ID is echoed back; optional, at most 128 bytes.
	ID string `json:"id,omitempty"`
	// Tokens are the input token ids (sequence models). Either Tokens or
	// InputLen; with both, they must agree.
	Tokens []int `json:"tokens,omitempty"`
	// InputLen asks the worker to synthesise a deterministic input of this
	// many tokens (load generators, image models' input seed).
	InputLen int `json:"input_len,omitempty"`
	// MaxTokens is how many tokens to generate (generative models).
	MaxTokens int `json:"max_tokens,omitempty"`
	// DeadlineMS is this request's latency budget; 0 uses the model's SLO.
	DeadlineMS int `json:"deadline_ms,omitempty"`
}

// Limits bound what one model accepts.
type Limits struct {
	MaxInput  int // tokens (default 4096)
	MaxOutput int // tokens (default 1024)
	Vocab     int // token ids are in [0, Vocab) (default 1000)
	MaxSLO    time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxInput <= 0 {
		l.MaxInput = 4096
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 1024
	}
	if l.Vocab <= 0 {
		l.Vocab = 1000
	}
	if l.MaxSLO <= 0 {
		l.MaxSLO = time.Minute
	}
	return l
}

// FieldError names the offending field.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return "field " + e.Field + ": " + e.Msg }

// DecodeRequest reads one request from r (already size-bounded by the
// caller), rejecting unknown fields, trailing data and out-of-range values.
func DecodeRequest(r io.Reader, lim Limits) (Request, error) {
	lim = lim.withDefaults()
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return Request{}, fmt.Errorf("malformed JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Request{}, errors.New("malformed JSON: trailing data after the request object")
	}
	return req, req.validate(lim)
}

// DecodeRequestBytes is DecodeRequest on a byte slice.
func DecodeRequestBytes(b []byte, lim Limits) (Request, error) {
	return DecodeRequest(bytes.NewReader(b), lim)
}

func (r *Request) validate(lim Limits) error {
	if len(r.ID) > 128 {
		return &FieldError{"id", "longer than 128 bytes"}
	}
	if r.InputLen < 0 || r.InputLen > lim.MaxInput {
		return &FieldError{"input_len", fmt.Sprintf("%d is outside [0, %d]", r.InputLen, lim.MaxInput)}
	}
	if len(r.Tokens) > lim.MaxInput {
		return &FieldError{"tokens", fmt.Sprintf("%d tokens, at most %d", len(r.Tokens), lim.MaxInput)}
	}
	for i, t := range r.Tokens {
		if t < 0 || t >= lim.Vocab {
			return &FieldError{"tokens", fmt.Sprintf("token %d at position %d is outside [0, %d)", t, i, lim.Vocab)}
		}
	}
	if len(r.Tokens) > 0 && r.InputLen != 0 && r.InputLen != len(r.Tokens) {
		return &FieldError{"input_len", fmt.Sprintf("%d disagrees with %d tokens", r.InputLen, len(r.Tokens))}
	}
	if len(r.Tokens) > 0 {
		r.InputLen = len(r.Tokens)
	}
	if r.MaxTokens < 0 || r.MaxTokens > lim.MaxOutput {
		return &FieldError{"max_tokens", fmt.Sprintf("%d is outside [0, %d]", r.MaxTokens, lim.MaxOutput)}
	}
	if r.DeadlineMS < 0 || time.Duration(r.DeadlineMS)*time.Millisecond > lim.MaxSLO {
		return &FieldError{"deadline_ms", fmt.Sprintf("%d is outside [0, %d]", r.DeadlineMS, lim.MaxSLO.Milliseconds())}
	}
	return nil
}
