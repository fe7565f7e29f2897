package serve

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// TraceReq is one request of a recorded trace: when it arrived (from the
// trace's first request) and its input and output lengths in tokens.
type TraceReq struct {
	At      time.Duration
	In, Out int
}

// LoadAzureLLM reads an Azure LLM inference trace (Splitwise, 2023) CSV:
// TIMESTAMP,ContextTokens,GeneratedTokens.
func LoadAzureLLM(path string) ([]TraceReq, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseAzureLLM(f)
}

// ParseAzureLLM parses the trace from r; errors name the line and column.
func ParseAzureLLM(r io.Reader) ([]TraceReq, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 3
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("azure trace: header: %w", err)
	}
	if head[0] != "TIMESTAMP" || head[1] != "ContextTokens" || head[2] != "GeneratedTokens" {
		return nil, fmt.Errorf("azure trace: header %v, want TIMESTAMP,ContextTokens,GeneratedTokens", head)
	}
	var out []TraceReq
	var first time.Time
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("azure trace: %w", err)
		}
		ts, err := time.Parse("2006-01-02 15:04:05.9999999", rec[0])
		if err != nil {
			return nil, fmt.Errorf("azure trace: line %d TIMESTAMP: %w", line, err)
		}
		in, err1 := strconv.Atoi(rec[1])
		gen, err2 := strconv.Atoi(rec[2])
		if err1 != nil || err2 != nil || in < 0 || gen < 0 {
			return nil, fmt.Errorf("azure trace: line %d: token counts %q,%q are not non-negative integers", line, rec[1], rec[2])
		}
		if first.IsZero() {
			first = ts
		}
		at := ts.Sub(first)
		if at < 0 {
			return nil, fmt.Errorf("azure trace: line %d: timestamp before the first request", line)
		}
		out = append(out, TraceReq{At: at, In: in, Out: gen})
	}
}
