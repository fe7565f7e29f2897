package taskspec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseMiB(t *testing.T) {
	cases := map[string]uint64{
		"4GiB": 4096, "512MiB": 512, "512": 512, "1.5GiB": 1536, "1 TiB": 1 << 20,
		"1GB": 954, "100kib": 1, "100KiB": 1, "2g": 1908, "4gib": 4096, "1KB": 1, " 64 MiB ": 64, "1,024MiB": 1024,
	}
	for in, want := range cases {
		got, err := ParseMiB(in)
		if err != nil || got != want {
			t.Errorf("ParseMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "4XB", "-1", "-4GiB", "0", "0MiB", "NaN", "Inf", "-Inf", "1e30GiB", "1e30", "99999999999EiB", "lots"} {
		if got, err := ParseMiB(bad); err == nil {
			t.Errorf("ParseMiB(%q) = %d, accepted", bad, got)
		}
	}
}

// The scheduler reads configs from Nomad's JSON; typos and wrong types
// name the key, and what the driver would refuse is refused here too.
func TestFromJobAndParseAgree(t *testing.T) {
	cases := []struct {
		json, want string
	}{
		{`{"command":"x","gpus":1,"gpu_fraction":0.5}`, "gpus and gpu_fraction: set one or the other"},
		{`{"command":"x","gpu_fraction":"abc"}`, `gpu_fraction: "abc" must be a number`},
		{`{"command":"x","gpu_fractoin":0.5}`, "gpu_fractoin: not a caravan config key"},
		{`{"command":"x","gpu_fraction":0.5,"gpu_memory":"NaN"}`, `gpu_memory: "NaN" is not a size`},
		{`{"command":"x","gpu_fraction":0.5,"gpu_memory":true}`, "gpu_memory = true: want a string or a number"},
		{`{"command":"x","args":["a",{}]}`, "args[1]: want a string or a number"},
		{`{"command":"x","gpus":1.5}`, `gpus: "1.5" must be a whole number`},
	}
	for _, c := range cases {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.json), &m); err != nil {
			t.Fatal(err)
		}
		cfg, err := FromJob(m)
		if err == nil {
			_, err = cfg.Parse()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.json, err, c.want)
		}
	}
	var m map[string]any
	json.Unmarshal([]byte(`{"command":"x","gpu_fraction":"0.5","gpu_memory":"2g","args":["a",2]}`), &m)
	cfg, err := FromJob(m)
	if err != nil {
		t.Fatal(err)
	}
	req, err := cfg.Parse()
	if err != nil || req.Fraction != 0.5 || req.MemMiB != 1908 || req.None() || cfg.Args[1] != "2" {
		t.Fatalf("string fraction: %+v %v", req, err)
	}
}

func FuzzParseMiB(f *testing.F) {
	for _, s := range []string{"4GiB", "512", "1.5 GB", "2g", "NaN", "1e30GiB", "-1", "100KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mib, err := ParseMiB(s)
		if err == nil && (mib == 0 || mib > maxMiB) {
			t.Fatalf("ParseMiB(%q) = %d", s, mib)
		}
	})
}

func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"command":"x","gpus":1}`, `{"command":"x","gpu_fraction":"0.5","gpu_memory":"4GiB"}`, `{"gpu_uuids":["a","a"]}`, `{"args":[1]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		cfg, err := FromJob(m)
		if err != nil {
			return
		}
		req, err := cfg.Parse()
		if err != nil {
			return
		}
		if req.Whole < 0 || req.Whole > MaxWholeGPUs || req.Fraction < 0 || req.Fraction > 1 || (req.Whole > 0 && req.Fraction > 0) {
			t.Fatalf("%s parsed as %+v", s, req)
		}
	})
}
