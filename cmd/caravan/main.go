// Command caravan is Caravan's operator CLI. Each subcommand is one row of
// the commands table; adding one is a one-line change.
package main

import (
	"fmt"
	"io"
	"os"
)

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"sim":       {"replay job traces against scheduling policies (run, compare, bench, policies)", runSim},
	"serve":     {"inference front end with deadlines (Orloj): run, profile, bench", runServe},
	"scheduler": {"run the live scheduler against a Nomad cluster (NOMAD_ADDR, NOMAD_TOKEN)", runScheduler},
	"queue":     {"show the live scheduler's queue: rank, attained service, why each job waits", runQueue},
	"nodes":     {"show the gossip view: each node's memory, donatable memory, GPUs in use, slowest and fastest link", runNodes},
	"nodesim":   {"run many simulated Nomad clients with caravan GPUs in this process (scale tests)", runNodesim},
	"colocate":  {"Horus co-location: predictor error on measured pairs, and a co-location benchmark", runColocate},
	"aggsvc":    {"run the shared gradient-aggregation service (Consul: caravan-aggsvc); `aggsvc token` prints tokens", runAggsvc},
	"tune":      {"hyperparameter tuning with Fluid water-filling: run, status, sim", runTune},
}

func main() {
	if err := dispatch(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "caravan:", err)
		os.Exit(1)
	}
}
