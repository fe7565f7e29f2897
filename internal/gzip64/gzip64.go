// Package gzip64 packs bytes as gzip in base64, the form Caravan stores in
// Nomad Variables (whose items are strings limited to 64 KiB), and unpacks
// them with a bound, so a corrupt or hostile Variable is an error, never
// an unbounded allocation or a panic.
package gzip64

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
)

// Encode gzips b and returns it in standard base64.
func Encode(b []byte) (string, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// Decode is Encode's inverse; a payload inflating past limit bytes is an
// error.
func Decode(s string, limit int) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("payload is not base64: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("payload is not gzip: %w", err)
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("payload is not valid gzip: %w", err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("payload inflates past %d bytes", limit)
	}
	return b, nil
}
