package main

import (
	"fmt"
	"io"

	"github.com/caravan-dl/caravan/scheduler/live"
)

func init() {
	commands["scheduler"] = command{"run the live scheduler against a Nomad cluster (NOMAD_ADDR, NOMAD_TOKEN)", runLive(live.SchedulerMain)}
	commands["queue"] = command{"show the live scheduler's queue: rank, attained service, why each job waits", runLive(live.QueueMain)}
}

// runLive adapts the live package's exit-code entry points; they print their
// own errors, so only the code is carried up.
func runLive(main func([]string) int) func([]string, io.Writer, io.Writer) error {
	return func(args []string, _, _ io.Writer) error {
		if code := main(args); code != 0 {
			return fmt.Errorf("exit status %d", code)
		}
		return nil
	}
}
