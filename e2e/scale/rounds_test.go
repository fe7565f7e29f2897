package scale

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// roundStats is what the scheduler's own metrics say of its rounds: how
// many, their latency quantiles (bucket upper bounds of
// caravan_scheduler_round_seconds: within a factor of 1.5 from 128 ms to 4 s) and the
// Nomad API calls a round made on average.
type roundStats struct {
	rounds        float64
	p50, p99      float64 // seconds, bucket bounds
	callsPerRound float64
	stages        map[string]float64 // seconds per round stage, in all
	calls         map[string]float64 // API calls by what they were for, in all
	gcs, gcSecs   float64            // collections run between rounds (gcpace) and their time
}

func (r roundStats) String() string {
	var st []string
	order := []string{"observe", "classify", "unplaced", "snapshot", "decide", "apply", "park", "view", "save"}
	var more []string
	for k := range r.stages {
		if !slices.Contains(order, k) {
			more = append(more, k)
		}
	}
	sort.Strings(more)
	order = append(order, more...)
	for _, k := range order {
		if v, ok := r.stages[k]; ok {
			st = append(st, fmt.Sprintf("%s %.1f s", k, v))
		}
	}
	var calls []string
	for k, v := range r.calls {
		calls = append(calls, fmt.Sprintf("%s %.0f", k, v))
	}
	sort.Strings(calls)
	return fmt.Sprintf("%.0f rounds, round p50 ≤ %s, p99 ≤ %s, %.1f API calls per round; time in rounds: %s; calls: %s; between rounds: %.0f paced collections, %.1f s", r.rounds,
		secs(r.p50), secs(r.p99), r.callsPerRound, strings.Join(st, ", "), strings.Join(calls, ", "), r.gcs, r.gcSecs)
}

func secs(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// scrapeRounds reads GET /metrics of the scheduler at addr, trying three
// times (a kept-alive connection the scheduler closed reads as EOF once).
func scrapeRounds(addr, token string) (r roundStats, err error) {
	for range 3 {
		if r, err = scrapeRoundsOnce(addr, token); err == nil {
			return r, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return r, err
}

func scrapeRoundsOnce(addr, token string) (roundStats, error) {
	req, err := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		return roundStats{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return roundStats{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return roundStats{}, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	var buckets []bucket
	var calls, callRounds, gcs, gcSecs float64
	stages, byCall := map[string]float64{}, map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := sample(sc.Text())
		switch {
		case !ok:
		case strings.HasPrefix(name, "caravan_scheduler_round_seconds_bucket{le=\""):
			le, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(name, "caravan_scheduler_round_seconds_bucket{le=\""), "\"}"), 64)
			if err == nil {
				buckets = append(buckets, bucket{le, v})
			}
		case strings.HasPrefix(name, "caravan_scheduler_round_stage_seconds_total{stage=\""):
			stages[strings.TrimSuffix(strings.TrimPrefix(name, "caravan_scheduler_round_stage_seconds_total{stage=\""), "\"}")] = v
		case strings.HasPrefix(name, "caravan_scheduler_api_calls_total{call=\""):
			byCall[strings.TrimSuffix(strings.TrimPrefix(name, "caravan_scheduler_api_calls_total{call=\""), "\"}")] = v
		case name == "caravan_scheduler_round_api_calls_sum":
			calls = v
		case name == "caravan_scheduler_round_api_calls_count":
			callRounds = v
		case name == "caravan_scheduler_paced_gc_total":
			gcs = v
		case name == "caravan_scheduler_paced_gc_seconds_total":
			gcSecs = v
		}
	}
	if err := sc.Err(); err != nil {
		return roundStats{}, err
	}
	r := summariseBuckets(buckets, calls, callRounds)
	r.stages, r.calls, r.gcs, r.gcSecs = stages, byCall, gcs, gcSecs
	return r, nil
}

type bucket struct{ le, count float64 }

func sample(line string) (string, float64, bool) {
	if strings.HasPrefix(line, "#") {
		return "", 0, false
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	return line[:i], v, err == nil
}

// summariseBuckets turns cumulative histogram buckets into quantile bounds.
func summariseBuckets(bs []bucket, calls, callRounds float64) roundStats {
	sort.Slice(bs, func(a, b int) bool { return bs[a].le < bs[b].le })
	var r roundStats
	if len(bs) > 0 {
		r.rounds = bs[len(bs)-1].count
	}
	quantile := func(q float64) float64 {
		for _, b := range bs {
			if b.count >= q*r.rounds {
				return b.le
			}
		}
		return 0
	}
	r.p50, r.p99 = quantile(0.5), quantile(0.99)
	if callRounds > 0 {
		r.callsPerRound = calls / callRounds
	}
	return r
}
