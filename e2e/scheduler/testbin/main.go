// Command testbin is the live scheduler as a standalone process, so the
// e2e tests can kill and restart it like a real deployment.
package main

import (
	"os"

	"github.com/caravan-dl/caravan/scheduler/live"
)

func main() { os.Exit(live.SchedulerMain(os.Args[1:])) }
