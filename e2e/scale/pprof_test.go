package scale

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// serverProfile saves a 30 s CPU profile of the Nomad server, taken while
// the jobs are being placed, as <dir>/nomad-<mode>.pprof
// (CARAVAN_SCALE_PPROF=dir; the server runs with enable_debug).
func serverProfile(c *harness.Cluster, dir string, queued bool) {
	mode := "direct"
	if queued {
		mode = "caravan"
	}
	time.Sleep(5 * time.Second)
	resp, err := http.Get(c.Server.HTTPAddr + "/v1/agent/pprof/profile?seconds=30")
	if err != nil {
		fmt.Fprintf(os.Stderr, "nomad pprof: %v\n", err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	f, err := os.Create(filepath.Join(dir, "nomad-"+mode+".pprof"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nomad pprof: %v\n", err)
		return
	}
	defer func() { _ = f.Close() }()
	if _, err := io.Copy(f, resp.Body); err != nil {
		fmt.Fprintf(os.Stderr, "nomad pprof: %v\n", err)
	}
}
