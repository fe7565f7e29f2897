package scale

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// serverProfile saves a 30 s CPU profile of the Nomad server, taken while
// the jobs are being placed, from profileAfter on, as
// <dir>/nomad-<mode>.pprof (CARAVAN_SCALE_PPROF=dir; the server runs with
// enable_debug).
func serverProfile(c *harness.Cluster, dir string, queued bool) {
	time.Sleep(profileAfter())
	url := c.Server.HTTPAddr + "/v1/agent/pprof/profile?seconds=30"
	if err := fetchProfile(url, "", filepath.Join(dir, "nomad-"+modeName(queued)+".pprof")); err != nil {
		fmt.Fprintf(os.Stderr, "nomad pprof: %v\n", err)
	}
}

// clientsProfile saves, beside the server's, a 30 s CPU profile of this
// process, where the simulated clients run (most of its CPU), as
// <dir>/clients-<mode>.pprof.
func clientsProfile(dir string, queued bool) {
	time.Sleep(profileAfter())
	f, err := os.Create(filepath.Join(dir, "clients-"+modeName(queued)+".pprof"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "clients pprof: %v\n", err)
		return
	}
	defer func() { _ = f.Close() }()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "clients pprof: %v\n", err)
		return
	}
	time.Sleep(30 * time.Second)
	pprof.StopCPUProfile()
}

// schedulerProfile saves, beside the server's, a 30 s CPU profile of the
// scheduler and then its allocations since it started, taken while the
// jobs are being placed, from profileAfter on: <dir>/scheduler-cpu.pprof and
// <dir>/scheduler-allocs.pprof (the scheduler runs with -pprof).
func schedulerProfile(addr, dir string) {
	time.Sleep(profileAfter())
	for _, p := range []struct{ path, file string }{
		{"/debug/pprof/profile?seconds=30", "scheduler-cpu.pprof"},
		{"/debug/pprof/allocs", "scheduler-allocs.pprof"},
	} {
		if err := fetchProfile("http://"+addr+p.path, "scale", filepath.Join(dir, p.file)); err != nil {
			fmt.Fprintf(os.Stderr, "scheduler pprof: %v\n", err)
		}
	}
}

// modeName names a side in file names: "caravan" or "direct".
func modeName(queued bool) string {
	if queued {
		return "caravan"
	}
	return "direct"
}

// profileAfter is how long after the submission began the profiles are
// taken: CARAVAN_SCALE_PPROF_AFTER (a duration), else 5 s.
func profileAfter() time.Duration {
	after, err := time.ParseDuration(os.Getenv("CARAVAN_SCALE_PPROF_AFTER"))
	if err != nil {
		return 5 * time.Second
	}
	return after
}

// fetchProfile saves the profile at url into file, sending token as a
// bearer token unless it is empty.
func fetchProfile(url, token, file string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = io.Copy(f, resp.Body)
	return err
}
