package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caravan-dl/caravan/internal/gzip64"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

const testStatePath = "caravan/scheduler/state"

// bigState is n jobs with the records a busy cluster has: placements with
// GPU UUIDs, a full decision log.
func bigState(n int) *state {
	st := newState()
	for i := 0; i < n; i++ {
		st.Jobs[fmt.Sprintf("train-%05d", i)] = &record{
			Submit: 1.7e9 + float64(i), Attained: float64(i) * 3.25, Executed: float64(i) * 1.5,
			LastStart: 1.7e9 + float64(i) + 10, Accounted: 1.7e9 + float64(i) + 20,
			Admissions: 1 + i%3, Preemptions: i % 2, CreateIndex: uint64(1000 + i),
			Placement: fmt.Sprintf("w0=%08x-node-%04d/%d/GPU-%08x-1c2d-3e4f-5a6b-%012x/1/0;w1=%08x-node-%04d/%d/GPU-%08x-7c8d-9e0f-1a2b-%012x/0.5/4096",
				i*7919, i%1000, i%8, i*104729, i, i*7907, (i+1)%1000, (i+1)%8, i*130363, i+1),
		}
	}
	for i := 0; i < 100; i++ {
		st.log(100, decision{At: 1.7e9 + float64(i), Job: fmt.Sprintf("train-%05d", i), Action: "admit", Detail: "w0=node/0/GPU-x/1/0"})
	}
	return st
}

func sameState(t *testing.T, got, want *state) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded state differs: %d jobs, %d decisions; want %d, %d",
			len(got.Jobs), len(got.Decisions), len(want.Jobs), len(want.Decisions))
	}
}

func mustLoad(t *testing.T, s *store) *state {
	t.Helper()
	st, err := s.load()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStoreRoundTripSmallStateInOneVariable(t *testing.T) {
	f, c := newFakeVars(t)
	s := newStore(c, testStatePath, "default", nil)
	if st := mustLoad(t, s); len(st.Jobs) != 0 {
		t.Fatalf("absent Variable: %d jobs", len(st.Jobs))
	}
	want := bigState(20)
	if err := s.save(want); err != nil {
		t.Fatal(err)
	}
	if got := f.paths("caravan/"); !reflect.DeepEqual(got, []string{testStatePath}) {
		t.Fatalf("Variables written: %v, want only the main one", got)
	}
	if it := f.get(testStatePath).Items; it[itemEncoding] != encodingGzip || it[itemParts] != "0" || it[itemData] == "" {
		t.Fatalf("main items: %v", it)
	}
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), want)
}

// 10,000 jobs: the old single-Variable write is refused as Nomad refuses
// it; the new one splits over parts, each under the limit, and loads back.
func TestStoreRoundTripTenThousandJobsInParts(t *testing.T) {
	f, c := newFakeVars(t)
	want := bigState(10000)
	js, _ := json.Marshal(want)
	_, _, err := c.Variables().Update(&api.Variable{Path: "caravan/scheduler/old", Items: api.VariableItems{stateItem: string(js)}}, nil)
	if err == nil || !strings.Contains(err.Error(), "variables are limited to 64KiB") {
		t.Fatalf("the fake accepted %d bytes of raw JSON in one Variable: %v", len(js), err)
	}
	s := newStore(c, testStatePath, "default", nil)
	mustLoad(t, s)
	if err := s.save(want); err != nil {
		t.Fatal(err)
	}
	first := s.cur
	parts := f.paths(testStatePath + "/part/")
	if first.Parts < 2 || len(parts) != first.Parts {
		t.Fatalf("%d parts in the header, %d stored", first.Parts, len(parts))
	}
	enc, _ := encodeState(want)
	t.Logf("10,000 jobs: JSON %d bytes, encoded %d bytes (%d per 1,000 jobs), %d parts",
		len(js), len(enc), len(enc)/10, first.Parts)
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), want)

	// The next save deletes the previous generation's parts.
	want.Jobs["train-00000"].Attained = 42
	if err := s.save(want); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.paths(testStatePath + "/part/") {
		if strings.Contains(p, first.Gen.String()) {
			t.Fatalf("previous generation's part %s is left", p)
		}
	}
	if n := len(f.paths(testStatePath + "/part/")); n != s.cur.Parts {
		t.Fatalf("%d parts stored, header says %d", n, s.cur.Parts)
	}
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), want)
}

func TestStoreReadsThePreviousFormat(t *testing.T) {
	f, c := newFakeVars(t)
	want := bigState(50)
	js, _ := json.Marshal(want)
	f.set(testStatePath, map[string]string{stateItem: string(js)})
	s := newStore(c, testStatePath, "default", nil)
	sameState(t, mustLoad(t, s), want)
	if err := s.save(want); err != nil { // upgrades it in place, with CAS
		t.Fatal(err)
	}
	if it := f.get(testStatePath).Items; it[itemEncoding] != encodingGzip {
		t.Fatalf("not rewritten in the new format: %v", it)
	}
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), want)

	f.set(testStatePath, map[string]string{"other": "x"})
	if _, err := newStore(c, testStatePath, "default", nil).load(); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Fatalf("a Variable of neither format: %v", err)
	}
}

func TestStoreMissingOrCorruptPartIsAnErrorNamingIt(t *testing.T) {
	f, c := newFakeVars(t)
	s := newStore(c, testStatePath, "default", nil)
	mustLoad(t, s)
	if err := s.save(bigState(3000)); err != nil {
		t.Fatal(err)
	}
	p1 := s.partPath(s.cur.Gen, 1)
	data := f.get(p1).Items[itemData]
	f.set(p1, map[string]string{itemData: data[:len(data)-4] + "AAAA"})
	_, err := newStore(c, testStatePath, "default", nil).load()
	if err == nil || !strings.Contains(err.Error(), p1) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt part: %v", err)
	}
	if _, err := c.Variables().Delete(p1, nil); err != nil {
		t.Fatal(err)
	}
	_, err = newStore(c, testStatePath, "default", nil).load()
	if err == nil || !strings.Contains(err.Error(), p1) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing part: %v", err)
	}
	t.Log(err)
}

func TestStoreCASConflictIsStateTaken(t *testing.T) {
	f, c := newFakeVars(t)
	a, b := newStore(c, testStatePath, "default", nil), newStore(c, testStatePath, "default", nil)
	mustLoad(t, a)
	mustLoad(t, b)
	want := bigState(3000)
	if err := a.save(want); err != nil {
		t.Fatal(err)
	}
	if err := b.save(bigState(2000)); !errors.Is(err, errStateTaken) {
		t.Fatalf("second writer: %v, want errStateTaken", err)
	}
	if n := len(f.paths(testStatePath + "/part/")); n != a.cur.Parts {
		t.Fatalf("the loser's parts were left: %d stored, winner has %d", n, a.cur.Parts)
	}
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), want)
	// Small states too.
	if err := b.save(newState()); !errors.Is(err, errStateTaken) {
		t.Fatalf("second writer, small state: %v", err)
	}
}

// The loser of a race writes its parts while the winner saves; they never
// touch the winner's, and its main write is refused.
func TestStoreLosingWriterDoesNotCorruptTheWinner(t *testing.T) {
	f, c := newFakeVars(t)
	a, b := newStore(c, testStatePath, "default", nil), newStore(c, testStatePath, "default", nil)
	mustLoad(t, a)
	mustLoad(t, b)
	won := bigState(3000)
	var saved atomic.Bool
	f.setBefore(func(method, path string) error {
		// b has begun writing parts: a saves now, whole.
		if method == "PUT" && strings.HasPrefix(path, testStatePath+"/part/") && saved.CompareAndSwap(false, true) {
			if err := a.save(won); err != nil {
				t.Errorf("winner: %v", err)
			}
		}
		return nil
	})
	// b writes parts first: a's save runs inside b's first part write.
	if err := b.save(bigState(4000)); !errors.Is(err, errStateTaken) {
		t.Fatalf("loser: %v", err)
	}
	f.setBefore(nil)
	if it := f.get(testStatePath).Items; it[itemParts] != fmt.Sprint(len(f.paths(testStatePath+"/part/"))) {
		t.Fatalf("main names %s parts, %d stored: the loser's were left", it[itemParts], len(f.paths(testStatePath+"/part/")))
	}
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), won)
}

// A writer that crashed after its parts leaves orphans of a newer
// generation: loads ignore them, a later save deletes them.
func TestStoreSweepsACrashedWritersParts(t *testing.T) {
	f, c := newFakeVars(t)
	a, crashed := newStore(c, testStatePath, "default", nil), newStore(c, testStatePath, "default", nil)
	mustLoad(t, a)
	mustLoad(t, crashed)
	f.setBefore(func(method, path string) error {
		if method == "PUT" && path == testStatePath {
			return errors.New("crashed")
		}
		return nil
	})
	if err := crashed.save(bigState(3000)); err == nil {
		t.Fatal("the crashed write succeeded")
	}
	f.setBefore(nil)
	orphans := f.paths(testStatePath + "/part/")
	if len(orphans) == 0 {
		t.Fatal("no orphan parts")
	}
	want := bigState(2500)
	mustLoad(t, a)
	for i := 0; i < 2; i++ {
		if err := a.save(want); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.paths(testStatePath + "/part/"); len(got) != a.cur.Parts || strings.Contains(strings.Join(got, " "), orphans[0]) {
		t.Fatalf("after two saves: %v (orphans %v)", got, orphans)
	}
	sameState(t, mustLoad(t, newStore(c, testStatePath, "default", nil)), want)
}

func TestDecodeStateRejectsGarbage(t *testing.T) {
	good, _ := encodeState(bigState(3))
	nullRec, _ := gzip64.Encode([]byte(`{"jobs":{"a":null}}`))
	notJSON, _ := gzip64.Encode([]byte(`{"jobs":`))
	for name, in := range map[string]string{
		"empty": "", "not base64": "!!!", "not gzip": "aGVsbG8=", "truncated": good[:len(good)/2],
		"null record": nullRec, "not JSON": notJSON, "binary": "\x00\xff\x1f\x8b",
	} {
		if _, err := decodeState(in); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	for _, items := range []map[string]string{
		{itemEncoding: "zstd"},
		{itemEncoding: encodingGzip, itemGen: "x"},
		{itemEncoding: encodingGzip, itemGen: "1_ab", itemParts: "-1"},
		{itemEncoding: encodingGzip, itemGen: "1_ab", itemParts: "2", itemSum: strings.Repeat("0", 64), itemPartSums: "a"},
		{itemEncoding: encodingGzip, itemGen: "1_ab", itemParts: "0", itemSum: "short"},
	} {
		if _, err := parseHeader(items); err == nil {
			t.Errorf("header %v parsed", items)
		}
	}
}

// The decoder takes a Variable's payload: garbage is an error, never a
// panic, and what decodes re-encodes to the same state.
func FuzzDecodeState(f *testing.F) {
	good, _ := encodeState(bigState(2))
	empty, _ := gzip64.Encode([]byte(`{"jobs":{}}`))
	for _, s := range []string{good, empty, "", "!!!", "aGVsbG8=", good[:len(good)/2]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := decodeState(s)
		if err != nil {
			return
		}
		again, err := encodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeState(again)
		if err != nil || !reflect.DeepEqual(back, st) {
			t.Fatalf("re-encoded state does not decode equal: %v", err)
		}
	})
}

// Deletes refused (a policy without destroy on the parts): saves still
// succeed, the warning is logged once, and stale parts go once allowed.
func TestStoreFailedDeletesWarnOnceAndRetry(t *testing.T) {
	f, c := newFakeVars(t)
	var buf bytes.Buffer
	s := newStore(c, testStatePath, "default", hclog.New(&hclog.LoggerOptions{Output: &buf}))
	mustLoad(t, s)
	f.setBefore(func(method, path string) error {
		if method == "DELETE" {
			return errors.New("Permission denied")
		}
		return nil
	})
	for i := 0; i < 3; i++ {
		if err := s.save(bigState(3000)); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "could not delete stale state parts"); n != 1 {
		t.Fatalf("warned %d times:\n%s", n, buf.String())
	}
	f.setBefore(nil)
	if err := s.save(bigState(3000)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.paths(testStatePath + "/part/")); n != s.cur.Parts {
		t.Fatalf("%d parts left, want the current %d", n, s.cur.Parts)
	}
}

// Encoding cost of a 10,000-job state: what every save pays on the CPU.
func BenchmarkStateCodec10000(b *testing.B) {
	st := bigState(10000)
	enc, _ := encodeState(st)
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeState(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeState(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A sweep whose deletes fail is tried again after the next save.
func TestStoreSweepRetriesFailedDeletes(t *testing.T) {
	f, c := newFakeVars(t)
	a, crashed := newStore(c, testStatePath, "default", nil), newStore(c, testStatePath, "default", nil)
	mustLoad(t, crashed)
	f.setBefore(func(method, path string) error {
		if method == "PUT" && path == testStatePath {
			return errors.New("crashed")
		}
		return nil
	})
	if err := crashed.save(bigState(3000)); err == nil {
		t.Fatal("the crashed write succeeded")
	}
	orphans := strings.Join(f.paths(testStatePath+"/part/"), " ")
	f.setBefore(func(method, path string) error {
		if method == "DELETE" && strings.Contains(orphans, path) {
			return errors.New("Permission denied")
		}
		return nil
	})
	mustLoad(t, a)
	for i := 0; i < 2; i++ { // the second save's sweep fails on the orphans
		if err := a.save(bigState(2000)); err != nil {
			t.Fatal(err)
		}
	}
	f.setBefore(nil)
	if err := a.save(bigState(2000)); err != nil {
		t.Fatal(err)
	}
	if got := f.paths(testStatePath + "/part/"); len(got) != a.cur.Parts {
		t.Fatalf("orphans left after a failed sweep and a later save: %v", got)
	}
}
