package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/live"
)

// Every command and subcommand answers -h, --help and `help X` with its
// own usage, on stdout, with no error.
func TestEveryCommandAnswersHelp(t *testing.T) {
	cases := map[string]string{
		"scheduler": "-policy", "queue": "-addr", "sim": "Subcommands", "sim run": "-trace", "sim compare": "-policies",
		"serve": "Subcommands", "tune": "Subcommands",
	}
	for cmd, want := range cases {
		words := strings.Fields(cmd)
		for _, args := range [][]string{append(words, "-h"), append(words, "--help"), append([]string{"help"}, words...)} {
			var out, errb bytes.Buffer
			if err := dispatch(args, &out, &errb); err != nil {
				t.Errorf("%q: %v", args, err)
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("%q: help lacks %q:\n%s\nstderr: %s", args, want, out.String(), errb.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if err := dispatch([]string{"--help"}, &out, &errb); err != nil || !strings.Contains(out.String(), "scheduler") {
		t.Fatalf("caravan --help: %v\n%s", err, out.String())
	}
}

func TestTestingFlagsStayOutOfHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if err := dispatch([]string{"scheduler", "-h"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "test-admit-delay") || !strings.Contains(out.String(), "-queue-limits") {
		t.Fatalf("scheduler help:\n%s", out.String())
	}
	if _, _, err := parseSchedulerFlags([]string{"-test-admit-delay", "1s"}, &errb); err != nil {
		t.Fatalf("hidden flag no longer parses: %v", err)
	}
}

func TestSchedulerFlags(t *testing.T) {
	var w strings.Builder
	if _, _, err := parseSchedulerFlags([]string{"-queue-limits", "1,x"}, &w); err == nil || !strings.Contains(err.Error(), "queue-limits") {
		t.Errorf("bad -queue-limits: %v", err)
	}
	if _, _, err := parseSchedulerFlags([]string{"-log-level", "loud"}, &w); err == nil {
		t.Error("bad -log-level accepted")
	}
	t.Setenv("CARAVAN_SCHEDULER_TOKEN", "from-env")
	cfg, _, err := parseSchedulerFlags([]string{"-queue-limits", "4, 40", "-policy", "tiresias-las"}, &w)
	if err != nil || len(cfg.QueueLimits) != 2 || cfg.QueueLimits[1] != 40 || cfg.Token != "from-env" {
		t.Fatalf("flags: %+v %v", cfg, err)
	}
	var help bytes.Buffer
	dispatch([]string{"scheduler", "-h"}, &help, &help)
	if strings.Contains(help.String(), "from-env") {
		t.Fatal("help prints the token from the environment")
	}
}

// `caravan queue -addr host:port` (as `nomad service info` prints it)
// works, over plain HTTP and, with -ca-cert, over TLS.
func TestQueueTakesHostPortAndTLS(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(live.QueueView{Leader: true, Policy: "fifo", Jobs: []live.QueueJob{{ID: "j1", State: "queued", Rank: 0, Reason: "no room"}}})
	})
	plain := httptest.NewServer(h)
	defer plain.Close()
	var out, errb bytes.Buffer
	if err := dispatch([]string{"queue", "-addr", strings.TrimPrefix(plain.URL, "http://"), "-token", "tok"}, &out, &errb); err != nil {
		t.Fatalf("host:port: %v", err)
	}
	if !strings.Contains(out.String(), "j1") || !strings.Contains(out.String(), "no room") {
		t.Fatalf("queue table:\n%s", out.String())
	}
	secure := httptest.NewTLSServer(h)
	defer secure.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := dispatch([]string{"queue", "-addr", strings.TrimPrefix(secure.URL, "https://"), "-token", "tok", "-ca-cert", ca, "-json"}, &out, &errb); err != nil {
		t.Fatalf("TLS: %v", err)
	}
	if !strings.Contains(out.String(), `"j1"`) {
		t.Fatalf("queue JSON: %s", out.String())
	}
}

// Every command in the table answers -h without an error (a new command
// that starts work or fails on -h breaks this).
func TestEveryTableCommandAnswersDashH(t *testing.T) {
	for name := range commands {
		var out, errb bytes.Buffer
		if err := dispatch([]string{name, "-h"}, &out, &errb); err != nil || out.Len()+errb.Len() == 0 {
			t.Errorf("caravan %s -h: %v (%d bytes of help)", name, err, out.Len()+errb.Len())
		}
		for sub := range subcommands[name] {
			out.Reset()
			if err := dispatch([]string{name, sub, "--help"}, &out, &errb); err != nil || out.Len() == 0 {
				t.Errorf("caravan %s %s --help: %v", name, sub, err)
			}
		}
	}
}

// -colocate-profiles gives the live scheduler the pair predictor that
// "+interference-bounded" placement needs; a bad file or GPU type is a
// flag error naming the flag.
func TestSchedulerColocateProfiles(t *testing.T) {
	gavel := repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json")
	var w strings.Builder
	// The repository's excerpt is too small to fit the predictor; the
	// measured pairs (oracle) load from it.
	cfg, _, err := parseSchedulerFlags([]string{"-policy", "fifo+interference-bounded", "-colocate-profiles", gavel, "-colocate-rule", "oracle", "-token", "t0ken-for-the-test"}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Pairs == nil {
		t.Fatal("no pair predictor loaded")
	}
	if _, err := live.New(cfg, nil, nil); err != nil {
		t.Fatalf("interference-bounded with profiles: %v", err)
	}
	cfg.Pairs = nil
	if _, err := live.New(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "predictor") {
		t.Fatalf("interference-bounded without profiles: %v, want an error naming the predictor", err)
	}
	for _, args := range [][]string{
		{"-colocate-profiles", filepath.Join(t.TempDir(), "missing.json")},
		{"-colocate-profiles", gavel, "-colocate-gpu", "a100"},
		{"-colocate-profiles", gavel, "-colocate-rule", "guess"},
	} {
		if _, _, err := parseSchedulerFlags(args, &w); err == nil || !strings.Contains(err.Error(), "colocate-profiles") {
			t.Errorf("%q: %v, want an error naming -colocate-profiles", args, err)
		}
	}
}
