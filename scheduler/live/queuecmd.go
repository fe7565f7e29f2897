package live

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// QueueMain is `caravan queue`: it prints the scheduler's queue, running
// jobs first, then queued jobs in priority order with why each waits.
func QueueMain(args []string) int {
	fs := flag.NewFlagSet("caravan queue", flag.ContinueOnError)
	addr := fs.String("addr", envOr("CARAVAN_SCHEDULER_ADDR", "http://127.0.0.1:4780"), "scheduler API address (default $CARAVAN_SCHEDULER_ADDR)")
	token := fs.String("token", os.Getenv("CARAVAN_SCHEDULER_TOKEN"), "bearer token (default $CARAVAN_SCHEDULER_TOKEN)")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	v, raw, err := FetchQueue(context.Background(), *addr, *token)
	if err != nil {
		fmt.Fprintln(os.Stderr, "caravan queue:", err)
		return 1
	}
	if *asJSON {
		os.Stdout.Write(raw)
		return 0
	}
	PrintQueue(os.Stdout, v)
	return 0
}

// FetchQueue reads GET /v1/queue from a scheduler.
func FetchQueue(ctx context.Context, addr, token string) (*QueueView, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(addr, "/")+"/v1/queue", nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	var v QueueView
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, fmt.Errorf("bad response: %w", err)
	}
	return &v, raw, nil
}

// PrintQueue renders a queue as a table.
func PrintQueue(w io.Writer, v *QueueView) {
	role := "standby"
	if v.Leader {
		role = "leader"
	}
	fmt.Fprintf(w, "policy %s (%s)\n", v.Policy, role)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tRANK\tQUEUE\tGPUS\tATTAINED(GPU·s)\tWAIT(s)\tPREEMPT\tSTEP\tLOSS\tREASON/PLACEMENT")
	for _, j := range v.Jobs {
		rk := "-"
		if j.Rank >= 0 {
			rk = fmt.Sprint(j.Rank)
		}
		why := j.Reason
		if j.State == "running" {
			why = j.Placement
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d×%g\t%.1f\t%.0f\t%d\t%s\t%s\t%s\n", j.ID, j.State, rk, j.Queue,
			j.Workers, j.Fraction, j.Attained, j.WaitSeconds, j.Preemptions, num(j.Step), num(j.Loss), why)
	}
	tw.Flush()
}

// num prints an optional number, "-" when absent.
func num(x *float64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'g', 4, 64)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
