package sim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

type named struct {
	policy.Policy
	name string
}

func (n named) Name() string { return n.name }

func TestCompareTableAndPlots(t *testing.T) {
	jobs := []Job{job("a", 0, 100, 1), job("b", 1, 10, 2), job("c", 2, 10, 1)}
	sc := Scenario{Name: "tiny", Cluster: cluster(t, 1, 2), Jobs: jobs, Config: Config{Check: true}}
	mk := func(n string) (policy.Policy, error) {
		switch n {
		case "fifo":
			return named{&testFIFO{}, "fifo"}, nil
		case "srtf-oracle":
			return named{&shortestFirst{}, "srtf-oracle"}, nil
		}
		return nil, fmt.Errorf("unknown %s", n)
	}
	var bar bytes.Buffer
	rs, err := Compare(sc, []string{"fifo", "srtf-oracle"}, mk, 2, &bar)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(sc, []string{"nosuch"}, mk, 1, nil); err == nil {
		t.Fatal("unknown policy accepted")
	}
	// FIFO: a 0-100, b 100-110, c 110-120 → avg (100+109+118)/3 = 109.
	// Shortest-first skips blocked b: c takes the free GPU at t=2 (ends 12),
	// b waits for a: 100-110. avg (100+109+10)/3 = 73.
	if !near(rs[0].Metrics.AvgJCT, 109) || !near(rs[1].Metrics.AvgJCT, 73) {
		t.Fatalf("avg JCT fifo %v srtf %v", rs[0].Metrics.AvgJCT, rs[1].Metrics.AvgJCT)
	}
	var tab bytes.Buffer
	WriteTable(&tab, rs)
	if !strings.Contains(tab.String(), "| srtf-oracle | 73 | 0.67 | 1.00 |") {
		t.Fatalf("table:\n%s", tab.String())
	}
	if !strings.Contains(bar.String(), "100%") {
		t.Fatalf("progress bar never finished: %q", bar.String())
	}
	dir := t.TempDir()
	if err := Plot(dir, "x-", "svg", rs); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x-jct_cdf.svg")); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Fatalf("svg not written: %v", err)
	}
	if err := Plot(dir, "", "gif", rs); err == nil {
		t.Fatal("gif accepted")
	}
}

// shortestFirst starts queued jobs by OracleDuration, skipping ones that
// do not fit (non-preemptive).
type shortestFirst struct{}

func (shortestFirst) Name() string { return "sjf" }
func (shortestFirst) Decide(s *policy.Snapshot) policy.Decision {
	q := []*policy.Job{}
	for _, j := range s.Jobs {
		if j.State == policy.Queued {
			q = append(q, j)
		}
	}
	for i := range q {
		for k := i + 1; k < len(q); k++ {
			if q[k].OracleDuration < q[i].OracleDuration {
				q[i], q[k] = q[k], q[i]
			}
		}
	}
	free := newFreeMap(s.Cluster)
	var d policy.Decision
	for _, j := range q {
		if pl, ok := free.place(j, j.Workers, false); ok {
			d.Starts = append(d.Starts, policy.Start{JobID: j.ID, Placement: pl})
		}
	}
	return d
}

func TestSpreadPlacerSpansNodes(t *testing.T) {
	c := cluster(t, 4, 2)
	capa := policy.NewCapacity(&c)
	j := &policy.Job{ID: "x", Workers: 6, Fraction: 1}
	d, _ := policy.DemandOf(j)
	p, why := Spread{}.Place(j, d, capa)
	if why != "" || len(p.Slots) != 6 {
		t.Fatalf("placement %v, %q", p, why)
	}
	per := map[string]int{}
	for _, s := range p.Slots {
		per[s.Node]++
	}
	if len(per) != 4 {
		t.Fatalf("6 workers on %d nodes, want all 4: %v", len(per), per)
	}
	if _, why := (Spread{}).Place(&policy.Job{ID: "y", Workers: 9, Fraction: 1}, policy.Demand{Workers: 9, Fraction: 1}, capa); why == "" {
		t.Fatal("9 workers fit on 8 GPUs")
	}
}
