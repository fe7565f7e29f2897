package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseAzureLLM(t *testing.T) {
	in := "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2023-11-16 18:15:46.6805900,374,44\n" +
		"2023-11-16 18:15:50.9951690,396,109\n"
	reqs, err := ParseAzureLLM(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0] != (TraceReq{0, 374, 44}) || reqs[1].At != 4314579*time.Microsecond || reqs[1].Out != 109 {
		t.Fatalf("got %+v", reqs)
	}
	for _, bad := range []string{
		"A,B,C\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,1,2\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,-1,2\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,1\n",
	} {
		if _, err := ParseAzureLLM(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestLoadAzureLLMWholeTrace(t *testing.T) {
	p := filepath.Join("..", "..", "shared", "traces", "azure-llm-inference-2023", "AzureLLMInferenceTrace_conv.csv")
	if _, err := os.Stat(p); err != nil {
		t.Skip("../shared/traces not present: " + err.Error())
	}
	reqs, err := LoadAzureLLM(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 19366 || reqs[len(reqs)-1].At < 50*time.Minute {
		t.Errorf("%d requests over %v", len(reqs), reqs[len(reqs)-1].At)
	}
}

func FuzzParseAzureLLM(f *testing.F) {
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n")
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,1,2\n2023-11-16 18:15:45.00,1,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		reqs, err := ParseAzureLLM(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range reqs {
			if r.At < 0 || r.In < 0 || r.Out < 0 {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

func FuzzReadProfile(f *testing.F) {
	f.Add("batch,in,out,latency_ms\n1,8,4,1.5\n")
	f.Add("batch,in,out,latency_ms\n1,8,4,NaN\n")
	f.Fuzz(func(t *testing.T, in string) {
		pts, err := ReadProfile(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range pts {
			if p.Latency <= 0 || p.Batch < 0 || p.In < 0 || p.Out < 0 {
				t.Fatalf("accepted %+v", p)
			}
		}
		if m, err := NewExecModel(pts); err == nil && m.Mean(1, 1, 1) <= 0 {
			t.Fatal("non-positive latency from a valid profile")
		}
	})
}
