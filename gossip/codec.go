package gossip

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// SchemaVersion is the envelope version this code writes. Readers accept
// any version ≥ 1: later versions may add fields and sections, which
// older readers ignore; a change older readers could misread would use a
// new message kind instead.
const SchemaVersion = 1

// Message kinds.
const (
	kindUpdate = "update" // broadcast: changed sections of one or more records
	kindFull   = "full"   // push-pull: every record the sender knows
)

// Decoder limits on outside input.
const (
	maxNodeName     = 256
	maxSections     = 64
	maxSectionBytes = 64 << 10
	maxRecords      = 100_000
)

type envelope struct {
	Schema  int      `json:"schema"`
	Kind    string   `json:"kind"`
	Records []Record `json:"recs"`
}

func encode(kind string, recs []Record) ([]byte, error) {
	return json.Marshal(envelope{Schema: SchemaVersion, Kind: kind, Records: recs})
}

// decode parses and validates a message of at most limit bytes. It never
// panics; every error names what was wrong.
func decode(buf []byte, limit int) (envelope, error) {
	var env envelope
	if len(buf) == 0 {
		return env, errors.New("empty message")
	}
	if len(buf) > limit {
		return env, fmt.Errorf("message of %d bytes exceeds the limit of %d", len(buf), limit)
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	if err := dec.Decode(&env); err != nil {
		return envelope{}, fmt.Errorf("malformed message: %w", err)
	}
	if dec.More() {
		return envelope{}, errors.New("malformed message: trailing data")
	}
	if err := env.validate(); err != nil {
		return envelope{}, err
	}
	return env, nil
}

func (e envelope) validate() error {
	if e.Schema < 1 {
		return fmt.Errorf("schema: %d, want ≥ 1", e.Schema)
	}
	if e.Kind != kindUpdate && e.Kind != kindFull {
		return fmt.Errorf("kind: %q is not %q or %q", e.Kind, kindUpdate, kindFull)
	}
	if len(e.Records) > maxRecords {
		return fmt.Errorf("recs: %d records exceed the limit of %d", len(e.Records), maxRecords)
	}
	for i, r := range e.Records {
		if err := r.validate(); err != nil {
			return fmt.Errorf("recs[%d]: %w", i, err)
		}
	}
	return nil
}

func (r Record) validate() error {
	if r.Node == "" || len(r.Node) > maxNodeName || !utf8.ValidString(r.Node) {
		return fmt.Errorf("n: node name must be 1..%d bytes of UTF-8", maxNodeName)
	}
	if len(r.Sections) > maxSections {
		return fmt.Errorf("s: %d sections exceed the limit of %d", len(r.Sections), maxSections)
	}
	for name, s := range r.Sections {
		if name == "" || len(name) > 64 {
			return fmt.Errorf("s: section name %q must be 1..64 bytes", name)
		}
		if s.Version == 0 {
			return fmt.Errorf("s.%s.v: version must be ≥ 1", name)
		}
		if len(s.Data) > maxSectionBytes {
			return fmt.Errorf("s.%s.d: %d bytes exceed the limit of %d", name, len(s.Data), maxSectionBytes)
		}
	}
	return nil
}
