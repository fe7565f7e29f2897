package live

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// partPath is where part i of generation g lives: under the state's path,
// so the scheduler's ACL policy (caravan/scheduler/*) covers it.
func (s *store) partPath(g generation, i int) string {
	return fmt.Sprintf("%s%s-%d", s.partPrefix(), g, i)
}

func (s *store) partPrefix() string { return s.path + "/part/" }

// partWriters bounds the part writes and deletes a save sends at once: a
// save of 10,000 jobs writes 16 parts and deletes the previous 16, each a
// Raft commit, which one at a time made the save most of a round.
const partWriters = 8

// writeParts creates generation g's parts and returns their sums. Each is
// created with check-and-set 0 (only if absent), so no write ever replaces
// a part, whoever wrote it. On error the parts written are deleted.
func (s *store) writeParts(g generation, chunks []string) ([]string, error) {
	errs := inParallel(len(chunks), partWriters, func(i int) error {
		v := &api.Variable{Namespace: s.ns, Path: s.partPath(g, i), Items: api.VariableItems{itemData: chunks[i]}}
		_, _, err := s.vars.CheckedUpdate(v, s.write())
		return err
	})
	for i, err := range errs {
		if err == nil {
			continue
		}
		inParallel(len(chunks), partWriters, func(j int) error {
			if errs[j] == nil {
				_, err := s.vars.Delete(s.partPath(g, j), s.write())
				return err
			}
			return nil
		})
		p := s.partPath(g, i)
		var cas api.ErrCASConflict
		if errors.As(err, &cas) {
			return nil, fmt.Errorf("write state part %s: it already exists", p)
		}
		return nil, fmt.Errorf("write state part %s (%d of %d): %w", p, i+1, len(chunks), err)
	}
	sums := make([]string, len(chunks))
	for i, c := range chunks {
		sums[i] = sum(c)
	}
	return sums, nil
}

// readParts joins h's parts, checking each against its sum.
func (s *store) readParts(h header) (string, error) {
	var b strings.Builder
	for i := 0; i < h.Parts; i++ {
		p := s.partPath(h.Gen, i)
		v, _, err := s.vars.Peek(p, s.query())
		switch {
		case err != nil:
			return "", fmt.Errorf("read state part %s: %w", p, err)
		case v == nil:
			return "", fmt.Errorf("state part %s (%d of %d) is missing", p, i+1, h.Parts)
		case sum(v.Items[itemData]) != h.PartSums[i]:
			return "", fmt.Errorf("state part %s (%d of %d) is corrupt: its sha256 is not %s", p, i+1, h.Parts, h.PartSums[i])
		}
		b.WriteString(v.Items[itemData])
	}
	return b.String(), nil
}

// deleteParts deletes h's parts, returning the first error.
func (s *store) deleteParts(h header) error {
	errs := inParallel(h.Parts, partWriters, func(i int) error {
		p := s.partPath(h.Gen, i)
		if _, err := s.vars.Delete(p, s.write()); err != nil {
			return fmt.Errorf("delete %s: %w", p, err)
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sweepParts deletes parts older than the current generation that it does
// not refer to: left by a crashed writer, a writer that lost the race, or
// a failed delete. Parts of newer generations may be a racing writer's in
// progress and are kept for a later sweep (its save fails: it loaded an
// older state). It returns how many it kept so and the last error.
func (s *store) sweepParts() (kept int, err error) {
	list, _, err := s.vars.PrefixList(s.partPrefix(), s.query())
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", s.partPrefix(), err)
	}
	for _, m := range list {
		g, _, perr := s.parsePartPath(m.Path)
		if perr != nil || g == s.cur.Gen {
			continue // not ours to delete, or current
		}
		if g.Seq >= s.cur.Gen.Seq {
			kept++
			continue
		}
		if _, derr := s.vars.Delete(m.Path, s.write()); derr != nil {
			err = fmt.Errorf("delete %s: %w", m.Path, derr)
		}
	}
	return kept, err
}

// parsePartPath reads a part's generation and index from its path.
func (s *store) parsePartPath(p string) (generation, int, error) {
	rest, ok := strings.CutPrefix(p, s.partPrefix())
	i := strings.LastIndexByte(rest, '-')
	if !ok || i < 0 {
		return generation{}, 0, fmt.Errorf("%q is not a state part", p)
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 {
		return generation{}, 0, fmt.Errorf("%q is not a state part", p)
	}
	g, err := parseGeneration(rest[:i])
	return g, n, err
}
