package live

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

// stateItem is the previous version's item holding the state's raw JSON;
// load still reads it, so an upgraded scheduler keeps the old state.
const stateItem = "state"

// errStateTaken means another writer changed the state: this instance is
// no longer the only scheduler and must stop leading.
var errStateTaken = errors.New("scheduler state was changed by another writer")

// loadTries bounds re-reads when a writer replaced the state while load
// was reading its parts.
const loadTries = 3

// store keeps state in one main Nomad Variable, written with check-and-set,
// and, when the encoded state passes chunkSize, in part Variables under
// <path>/part/ that the main one names by generation (store_parts.go).
type store struct {
	vars  *api.Variables
	path  string
	ns    string
	index uint64 // the main Variable's ModifyIndex; 0: absent
	cur   header // what the main Variable refers to now
	// sweep: part Variables other than cur's may exist (after load or a
	// failed delete); save lists and deletes the stale ones.
	sweep bool
	log   hclog.Logger
	// warned: a clean-up failure was logged and none has succeeded since,
	// so a lasting one (a policy without destroy on the parts) logs once.
	warned bool
}

func newStore(c *api.Client, path, ns string, log hclog.Logger) *store {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &store{vars: c.Variables(), path: path, ns: ns, log: log}
}

// load reads the state; a missing Variable is an empty state. A missing or
// corrupt part is an error naming it, never an empty state: that would
// forget every job's attained service.
func (s *store) load() (*state, error) {
	for try := 1; ; try++ {
		v, _, err := s.vars.Peek(s.path, s.query())
		if err != nil {
			return nil, fmt.Errorf("read state %s: %w", s.path, err)
		}
		if v == nil {
			s.index, s.cur, s.sweep = 0, header{}, true
			return newState(), nil
		}
		st, h, err := s.decode(v.Items)
		if err == nil {
			s.index, s.cur, s.sweep = v.ModifyIndex, h, true
			return st, nil
		}
		if try < loadTries && s.changed(v.ModifyIndex) {
			continue // a writer replaced the parts we were reading
		}
		return nil, fmt.Errorf("state %s: %w", s.path, err)
	}
}

// decode reads the main Variable's items in either format.
func (s *store) decode(items map[string]string) (*state, header, error) {
	if _, ok := items[itemEncoding]; !ok {
		raw, ok := items[stateItem]
		if !ok {
			return nil, header{}, errNotState
		}
		st, err := decodeJSON([]byte(raw))
		return st, header{}, err
	}
	h, err := parseHeader(items)
	if err != nil {
		return nil, h, err
	}
	payload := items[itemData]
	if h.Parts > 0 {
		if payload, err = s.readParts(h); err != nil {
			return nil, h, err
		}
	}
	if got := sum(payload); got != h.Sum {
		return nil, h, fmt.Errorf("generation %s: payload sha256 %s, want %s", h.Gen, got, h.Sum)
	}
	st, err := decodeState(payload)
	return st, h, err
}

// changed reports whether the main Variable is no longer at index.
func (s *store) changed(index uint64) bool {
	v, _, err := s.vars.Peek(s.path, s.query())
	return err == nil && v != nil && v.ModifyIndex != index
}

// save writes the state if nobody else wrote since load or the last save:
// parts first, then the main Variable with check-and-set, then the
// previous generation's parts are deleted.
func (s *store) save(st *state) error {
	payload, err := encodeState(st)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return s.savePayload(payload)
}

// savePayload is save of an encoded state (encodeState).
func (s *store) savePayload(payload string) error {
	gen, err := nextGeneration(s.cur.Gen)
	if err != nil {
		return err
	}
	h := header{Gen: gen, Sum: sum(payload)}
	items := map[string]string{}
	if len(payload) > chunkSize {
		chunks := split(payload)
		h.Parts = len(chunks)
		if h.PartSums, err = s.writeParts(gen, chunks); err != nil {
			return err
		}
	} else {
		items[itemData] = payload
	}
	for k, v := range h.items() {
		items[k] = v
	}
	v := &api.Variable{Namespace: s.ns, Path: s.path, Items: items, ModifyIndex: s.index}
	out, _, err := s.vars.CheckedUpdate(v, s.write())
	if err != nil {
		var cas api.ErrCASConflict
		if errors.As(err, &cas) {
			_ = s.deleteParts(h) // refused: nobody refers to them
			return errStateTaken
		}
		// The write may have been applied (a lost reply): keep the parts;
		// a later sweep deletes them if it was not.
		s.sweep = true
		return fmt.Errorf("write state %s (%d bytes encoded, %d parts): %w", s.path, len(payload), h.Parts, err)
	}
	prev := s.cur
	s.index, s.cur = out.ModifyIndex, h
	err = s.deleteParts(prev)
	if err != nil {
		s.sweep = true
	} else if s.sweep {
		var kept int
		kept, err = s.sweepParts()
		s.sweep = err != nil || kept > 0
	}
	s.logCleanup(err)
	return nil
}

// logCleanup warns once per run of failures: stale parts only cost space,
// but they pile up while deletes fail.
func (s *store) logCleanup(err error) {
	if err != nil && !s.warned {
		s.log.Warn("could not delete stale state parts; retrying after later saves (does the ACL policy grant destroy on them?)",
			"prefix", s.partPrefix(), "error", err)
	}
	s.warned = err != nil
}

func (s *store) query() *api.QueryOptions { return &api.QueryOptions{Namespace: s.ns} }
func (s *store) write() *api.WriteOptions { return &api.WriteOptions{Namespace: s.ns} }
