package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Tasks append {"step","loss","samples"} lines to $CARAVAN_PROGRESS_FILE.
// This file turns those bytes into the policy's progress points and step
// times; progress_poll.go reads them from running allocations.

// progress is what the scheduler has read of one job's progress.
type progress struct {
	points []policy.ProgressPoint
	// stepTimes is seconds per step by worker count, from the step rate
	// between two reads of the same allocation.
	stepTimes map[int]float64
	// The allocation being read, how far, an unfinished last line, and
	// whether the rest of an overlong line is still to be skipped.
	alloc    string
	offset   int64
	partial  []byte
	skipping bool
	// readAt, stepAt: time and step of the last read that moved.
	readAt, stepAt float64
	bad            int
	// final: the finished job's last allocation has been read.
	final bool
	// idle counts reads in a row that gave nothing (no file yet, a task
	// that writes no progress, an unreachable client); nextAt (Unix s)
	// is when the next read is due, later the more idle (progressBackoff).
	idle   int
	nextAt float64
	// triedAt (Unix s) is the last read, whatever it gave: with more
	// due reads than a poll's budget, the least recently tried go first.
	triedAt float64
}

// progressLine is one line as tasks write it; numbers may be missing.
type progressLine struct {
	Step    *float64 `json:"step"`
	Loss    *float64 `json:"loss"`
	Samples *float64 `json:"samples"`
}

// parseProgress splits buf into points. A trailing line without its
// newline is returned as rest, to be completed by the next read, unless
// it is already too long: then it is dropped, counted bad, and skip says
// the rest of that line must be skipped when it arrives. A line that is
// not such JSON, has no finite non-negative step or is too long counts as
// bad and is skipped.
func parseProgress(buf []byte) (pts []policy.ProgressPoint, rest []byte, bad int, skip bool) {
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			if len(buf) > maxProgressLine {
				return pts, nil, bad + 1, true
			}
			return pts, buf, bad, false
		}
		line := bytes.TrimSpace(buf[:i])
		buf = buf[i+1:]
		if len(line) == 0 {
			continue
		}
		p, err := parseProgressLine(line)
		if err != nil {
			bad++
			continue
		}
		pts = append(pts, p)
	}
	return pts, nil, bad, false
}

// skipLine drops b up to and including its first newline; done says the
// newline was found.
func skipLine(b []byte) (rest []byte, done bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, false
	}
	return b[i+1:], true
}

func parseProgressLine(line []byte) (policy.ProgressPoint, error) {
	if len(line) > maxProgressLine {
		return policy.ProgressPoint{}, errors.New("line too long")
	}
	var l progressLine
	if err := json.Unmarshal(line, &l); err != nil {
		return policy.ProgressPoint{}, err
	}
	finite := func(p *float64) bool { return p == nil || !(math.IsNaN(*p) || math.IsInf(*p, 0)) }
	if l.Step == nil || *l.Step < 0 || !finite(l.Step) || !finite(l.Loss) || !finite(l.Samples) {
		return policy.ProgressPoint{}, errors.New("want a finite step ≥ 0 and finite loss and samples")
	}
	p := policy.ProgressPoint{Step: *l.Step}
	if l.Loss != nil {
		p.Loss = *l.Loss
	}
	if l.Samples != nil {
		p.Samples = *l.Samples
	}
	return p, nil
}

// add appends new points read at time now while the job runs on workers
// workers, learning the step time from the step rate since the last read.
func (p *progress) add(pts []policy.ProgressPoint, now float64, workers int) {
	if len(pts) == 0 {
		return
	}
	last := pts[len(pts)-1].Step
	if p.readAt > 0 && last > p.stepAt && now > p.readAt && workers > 0 {
		st := (now - p.readAt) / (last - p.stepAt)
		if p.stepTimes == nil {
			p.stepTimes = map[int]float64{}
		}
		if old, ok := p.stepTimes[workers]; ok {
			st = 0.7*old + 0.3*st // smooth: reads are a poll apart
		}
		p.stepTimes[workers] = st
	}
	p.readAt, p.stepAt = now, last
	p.points = append(p.points, pts...)
	for len(p.points) > maxProgressPoints {
		p.points = thin(p.points)
	}
}

// thin keeps every other point, and always the last.
func thin(pts []policy.ProgressPoint) []policy.ProgressPoint {
	out := pts[:0]
	for i := 0; i < len(pts); i += 2 {
		out = append(out, pts[i])
	}
	if len(pts)%2 == 0 {
		out = append(out, pts[len(pts)-1])
	}
	return out
}

// fill gives the policy's job what was read of its progress.
func (p *progress) fill(j *policy.Job) {
	if p == nil {
		return
	}
	j.Progress = append([]policy.ProgressPoint(nil), p.points...)
	if len(p.stepTimes) > 0 {
		j.StepTimes = make(map[int]policy.Seconds, len(p.stepTimes))
		for w, st := range p.stepTimes {
			j.StepTimes[w] = st
		}
	}
}
