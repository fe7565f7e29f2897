package registry

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// update rewrites testdata/golden.txt from the current code. Only do that
// when a decision is meant to change, and say so in the commit.
var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

const goldenFile = "testdata/golden.txt"

// goldenSpec varies the random snapshot with the seed so the golden cases
// cover idle and full clusters, fractional and elastic jobs, and queues
// long enough that most jobs wait on an exhausted cluster.
func goldenSpec(seed uint64) pt.RandomSpec {
	sp := pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 2 + int(seed%3), NodesPerRack: 3 + int(seed%4), GPUsPerNode: 4 + 4*int(seed%2)},
		Running: 20 + int(seed*7%60), Queued: 40 + int(seed*13%200),
		Busy:      []float64{0, 0.5, 0.8, 0.95, 1}[seed%5],
		FracShare: []float64{0, 0.2, 0.5}[seed%3], ElasticShare: []float64{0, 0.3}[seed%2],
	}
	if seed%7 == 0 { // a bigger case: many nodes and racks, a long queue
		sp.Cluster = pt.ClusterSpec{Racks: 6, NodesPerRack: 10, GPUsPerNode: 8}
		sp.Running, sp.Queued = 300, 1500
	}
	return sp
}

// TestGoldenDecisions pins every policy's decisions on 20 seeded random
// snapshots: the cold decision, then (after applying it, as an executor
// would) the steady-state decision of the same policy instance, so online
// learning is covered too. Performance work must keep this green.
func TestGoldenDecisions(t *testing.T) {
	got := goldenDigests(t)
	if *update {
		writeGolden(t, got)
		return
	}
	want := readGolden(t)
	for _, k := range sortedKeys(got) {
		if w, ok := want[k]; !ok {
			t.Errorf("%s: no golden digest (run with -update if the case is new)", k)
		} else if w != got[k] {
			t.Errorf("%s: decision changed: %s", k, explainChange(w, got[k]))
		}
	}
	if len(want) != len(got) {
		t.Errorf("golden file has %d cases, test produced %d", len(want), len(got))
	}
}

func goldenDigests(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, name := range Names() {
		for seed := uint64(1); seed <= 20; seed++ {
			s := pt.Random(seed, goldenSpec(seed))
			p := mustNew(t, name)
			cold := p.Decide(pt.Clone(s))
			steady := p.Decide(pt.Apply(s, cold))
			key := name + " seed=" + strconv.FormatUint(seed, 10)
			out[key+" cold"] = goldenValue(cold)
			out[key+" steady"] = goldenValue(steady)
		}
	}
	if !testing.Short() {
		benchScaleDigests(t, out)
	}
	return out
}

// benchScaleDigests pins the benchmark's own snapshot (1,000 nodes, 10,000
// queued jobs) for the benchmarked policies, where shortcuts that only pay
// off on a huge exhausted cluster would show.
func benchScaleDigests(t *testing.T, out map[string]string) {
	base := pt.Random(42, benchSpec())
	for _, name := range benchPolicies {
		p := mustNew(t, name)
		cold := p.Decide(pt.Clone(base))
		steady := p.Decide(pt.Apply(base, cold))
		out["bench "+name+" cold"] = goldenValue(cold)
		out["bench "+name+" steady"] = goldenValue(steady)
	}
}

// digest hashes everything a decision says, in a canonical order: preempts
// and starts in decision order, waiting reasons sorted by job ID.
func digest(d policy.Decision) string {
	h := sha256.New()
	for _, id := range d.Preempts {
		fmt.Fprintf(h, "P %s\n", id)
	}
	for _, st := range d.Starts {
		fmt.Fprintf(h, "S %s", st.JobID)
		for _, sl := range st.Placement.Slots {
			fmt.Fprintf(h, " %s/%d/%g/%d", sl.Node, sl.GPU, sl.Fraction, sl.MemMiB)
		}
		fmt.Fprintln(h)
	}
	writeWaiting(h, d.Waiting)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func writeWaiting(h hash.Hash, ws policy.Waits) {
	w := ws.Map()
	ids := make([]string, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(h, "W %s %s\n", id, w[id])
	}
}

func writeGolden(t *testing.T, got map[string]string) {
	var b strings.Builder
	b.WriteString("# policy seed=N cold|steady digest parts — regenerate with go test -run TestGoldenDecisions -update\n")
	for _, k := range sortedKeys(got) {
		b.WriteString(k + " " + got[k] + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readGolden(t *testing.T) map[string]string {
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("%v (generate it with -update)", err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("%s: malformed line %q", goldenFile, line)
		}
		n := len(f) - 2 // key, digest, parts
		want[strings.Join(f[:n], " ")] = f[n] + " " + f[n+1]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestSkipReasonsSameDecisions: a caller that skips Waiting reasons (the
// simulator) gets exactly the starts and preemptions of one that reads
// them, cold and in steady state, for every policy.
func TestSkipReasonsSameDecisions(t *testing.T) {
	for _, name := range Names() {
		for seed := uint64(1); seed <= 20; seed++ {
			s := pt.Random(seed, goldenSpec(seed))
			full, quiet := mustNew(t, name), mustNew(t, name)
			for round := 0; round < 2; round++ {
				qs := pt.Clone(s)
				qs.SkipReasons = true
				want, got := full.Decide(pt.Clone(s)), quiet.Decide(qs)
				want.Waiting, got.Waiting = nil, nil
				if digest(want) != digest(got) {
					t.Fatalf("%s seed=%d round %d: decisions differ with SkipReasons", name, seed, round)
				}
				s = pt.Apply(s, want)
			}
		}
	}
}
