package live

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// stateItem is the Variable item holding the JSON state.
const stateItem = "state"

// errStateTaken means another writer changed the state: this instance is
// no longer the only scheduler and must stop leading.
var errStateTaken = errors.New("scheduler state was changed by another writer")

// store keeps state in one Nomad Variable, written with check-and-set.
type store struct {
	vars  *api.Variables
	path  string
	ns    string
	index uint64
}

func newStore(c *api.Client, path, ns string) *store {
	return &store{vars: c.Variables(), path: path, ns: ns}
}

// load reads the state; a missing Variable is an empty state.
func (s *store) load() (*state, error) {
	v, _, err := s.vars.Peek(s.path, &api.QueryOptions{Namespace: s.ns})
	if err != nil {
		return nil, fmt.Errorf("read state %s: %w", s.path, err)
	}
	st := newState()
	if v == nil {
		s.index = 0
		return st, nil
	}
	s.index = v.ModifyIndex
	if raw := v.Items[stateItem]; raw != "" {
		if err := json.Unmarshal([]byte(raw), st); err != nil {
			return nil, fmt.Errorf("state %s is not valid JSON: %w", s.path, err)
		}
	}
	if st.Jobs == nil {
		st.Jobs = map[string]*record{}
	}
	return st, nil
}

// save writes the state if nobody else wrote since load or the last save.
func (s *store) save(st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	v := &api.Variable{Namespace: s.ns, Path: s.path, Items: api.VariableItems{stateItem: string(b)}, ModifyIndex: s.index}
	out, _, err := s.vars.CheckedUpdate(v, &api.WriteOptions{Namespace: s.ns})
	var cas api.ErrCASConflict
	if errors.As(err, &cas) {
		return errStateTaken
	}
	if err != nil {
		return fmt.Errorf("write state %s: %w", s.path, err)
	}
	s.index = out.ModifyIndex
	return nil
}
