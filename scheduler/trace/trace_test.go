package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
)

// tracesDir holds the whole real traces (../shared/traces); tests that check
// whole files skip without it. testData holds the excerpts in the clone.
func tracesDir(t *testing.T) string { return repo.SharedTraces(t) }
func testData(t *testing.T) string  { return repo.TestData(t) }

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error containing %q, got nil", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

// TestPhillyExcerpt loads the first 600 jobs of the real Philly trace kept
// in testdata: sorted, shifted to start at 0, one VC selectable.
func TestPhillyExcerpt(t *testing.T) {
	path := filepath.Join(testData(t), "philly", "philly_jobs.csv")
	tr, err := LoadPhilly(path, PhillyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 600 || tr.Jobs[0].Submit != 0 {
		t.Fatalf("jobs = %d, first submit %v; want 600 jobs starting at 0", len(tr.Jobs), tr.Jobs[0].Submit)
	}
	for i := 1; i < len(tr.Jobs); i++ {
		if tr.Jobs[i].Submit < tr.Jobs[i-1].Submit {
			t.Fatalf("jobs not sorted at %d", i)
		}
	}
	vc, err := LoadPhilly(path, PhillyOptions{VC: "6214e9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vc.Jobs) == 0 || len(vc.Jobs) >= len(tr.Jobs) {
		t.Fatalf("6214e9 kept %d of %d jobs", len(vc.Jobs), len(tr.Jobs))
	}
}

func TestPhillyRealFile(t *testing.T) {
	tr, err := LoadPhilly(filepath.Join(tracesDir(t), "philly", "philly_jobs.csv"), PhillyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 82247 {
		t.Fatalf("jobs = %d, want 82247 (the file's data rows; its trailing blank line is skipped)", len(tr.Jobs))
	}
	if tr.Jobs[0].Submit != 0 {
		t.Fatalf("first submit %v, want 0 after shifting", tr.Jobs[0].Submit)
	}
	st := Summarise(tr.Jobs)
	if st.MaxGPUs != 128 {
		t.Fatalf("max GPUs %d, want 128", st.MaxGPUs)
	}
	for i := 1; i < len(tr.Jobs); i++ {
		if tr.Jobs[i].Submit < tr.Jobs[i-1].Submit {
			t.Fatalf("jobs not sorted at %d", i)
		}
	}
	vc, err := LoadPhilly(filepath.Join(tracesDir(t), "philly", "philly_jobs.csv"), PhillyOptions{VC: "6214e9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vc.Jobs) != 41226 {
		t.Fatalf("6214e9 jobs = %d, want 41226", len(vc.Jobs))
	}
}

func TestTiresiasRealFiles(t *testing.T) {
	dir := filepath.Join(testData(t), "tiresias")
	tr, err := LoadTiresias(filepath.Join(dir, "60_job.csv"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, j := range tr.Jobs {
		count[j.GPUs]++
	}
	if len(tr.Jobs) != 60 || count[1] != 30 || count[2] != 10 || count[4] != 10 || count[8] != 10 {
		t.Fatalf("got %d jobs with sizes %v, want 60 = 30×1 + 10×2/4/8", len(tr.Jobs), count)
	}
	if tr.Jobs[0].Duration != 164 || tr.Jobs[0].Model != "vgg19" {
		t.Fatalf("job 0 = %+v", tr.Jobs[0])
	}
	spec, err := LoadClusterSpec(filepath.Join(dir, "n32g4.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.GPUs() != 128 || spec.NodesPerSwitch != 32 {
		t.Fatalf("n32g4 = %+v", spec)
	}
	s, err := LoadGittinsSamples(filepath.Join(dir, "yarn-gput1000.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1001 || s[0] != 121 {
		t.Fatalf("samples: %d, first %v", len(s), s[0])
	}
}

// TestAlibabaExcerpt loads the first 400 pods of gpushare40 kept in
// testdata: CPU-only pods skipped, fractional pods on one GPU, round-up whole.
func TestAlibabaExcerpt(t *testing.T) {
	path := filepath.Join(testData(t), "alibaba-gpu-v2023", "openb_pod_list_gpushare40.csv")
	tr, skipped, err := LoadAlibabaPods(path, AlibabaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frac := 0
	for _, j := range tr.Jobs {
		if j.Fraction < 1 {
			frac++
		}
	}
	if skipped == 0 || frac == 0 || skipped+len(tr.Jobs) != 400 {
		t.Fatalf("%d jobs, %d skipped, %d fractional: want some of each, 400 pods in all", len(tr.Jobs), skipped, frac)
	}
	whole, _, err := LoadAlibabaPods(path, AlibabaOptions{RoundUp: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range whole.Jobs {
		if j.Fraction != 1 {
			t.Fatalf("round-up left fraction %v", j.Fraction)
		}
	}
}

func TestAlibabaRealFiles(t *testing.T) {
	dir := filepath.Join(tracesDir(t), "alibaba-gpu-v2023")
	tr, skipped, err := LoadAlibabaPods(filepath.Join(dir, "openb_pod_list_gpushare40.csv"), AlibabaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frac := 0
	for _, j := range tr.Jobs {
		if j.Fraction < 1 {
			frac++
			if j.GPUs != 1 {
				t.Fatalf("fractional multi-GPU pod %+v", j)
			}
		}
	}
	if skipped != 1088 || frac != 4001 {
		t.Fatalf("skipped %d CPU pods, %d fractional; want 1088 and 4001", skipped, frac)
	}
	whole, _, err := LoadAlibabaPods(filepath.Join(dir, "openb_pod_list_gpushare40.csv"), AlibabaOptions{RoundUp: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range whole.Jobs {
		if j.Fraction != 1 {
			t.Fatalf("round-up left fraction %v", j.Fraction)
		}
	}
	nodes, err := LoadAlibabaNodes(filepath.Join(dir, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1213 {
		t.Fatalf("nodes = %d, want 1213", len(nodes))
	}
}

func TestBrokenInputs(t *testing.T) {
	cases := []struct {
		name, body string
		load       func(string) error
		want       []string
	}{
		{"missing column", "timestamp,duration,cluster\n2017-10-01 00:00:00,5,x\n", philly, []string{":1:", "num_gpus"}},
		{"negative duration", "timestamp,duration,num_gpus,cluster\n2017-10-01 00:00:00,-5,1,x\n", philly, []string{":2:", "duration"}},
		{"bad number", "timestamp,duration,num_gpus,cluster\n2017-10-01 00:00:00,5,1,x\n2017-10-01 00:00:00,abc,1,x\n", philly, []string{":3:", "abc"}},
		{"bad time", "timestamp,duration,num_gpus,cluster\n10/01/2017,5,1,x\n", philly, []string{":2:", "timestamp"}},
		{"zero gpus", "job_id,num_gpu,submit_time,duration\n0,0,0,10\n", tiresias, []string{":2:", "num_gpu"}},
		{"tiresias nan", "job_id,num_gpu,submit_time,duration\n0,1,0,NaN\n", tiresias, []string{":2:", "duration"}},
		{"pod negative", "name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,1,500,10,5,10\n", alibaba, []string{":2:", "negative"}},
		{"pod milli", "name,num_gpu,gpu_milli,creation_time,deletion_time\np,1,1500,0,5\n", alibaba, []string{":2:", "gpu_milli"}},
		{"spec rows", "num_switch,num_node_p_switch,num_gpu_p_node\n1,2,4\n1,2,4\n", spec, []string{"one data row"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, c.body)
			err := c.load(p)
			wantErr(t, err, append([]string{p}, c.want...)...)
		})
	}
}

func philly(p string) error   { _, err := LoadPhilly(p, PhillyOptions{}); return err }
func tiresias(p string) error { _, err := LoadTiresias(p); return err }
func alibaba(p string) error  { _, _, err := LoadAlibabaPods(p, AlibabaOptions{}); return err }
func spec(p string) error     { _, err := LoadClusterSpec(p); return err }

func TestCheckFitsAndOpen(t *testing.T) {
	p := writeFile(t, "job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,16,5,10\n")
	tr, err := Open("tiresias:"+p, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, CheckFits(tr.Jobs, 8), p+":3", "16 GPUs")
	if err := CheckFits(tr.Jobs, 16); err != nil {
		t.Fatal(err)
	}
	_, err = Open("nosuch:"+p, OpenOptions{})
	wantErr(t, err, "unknown kind")
	_, err = Open(p, OpenOptions{})
	wantErr(t, err, "kind:path")
}
