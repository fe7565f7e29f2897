package sim

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Bar is a one-line progress bar on a terminal stream, redrawn at most
// five times a second. A nil *Bar does nothing.
type Bar struct {
	w     io.Writer
	label string
	total int
	last  time.Time
	start time.Time
}

// NewBar starts a bar counting to total.
func NewBar(w io.Writer, label string, total int) *Bar {
	return &Bar{w: w, label: label, total: max(total, 1), start: time.Now()}
}

// Update redraws the bar if enough wall time has passed.
func (b *Bar) Update(done int) {
	if b == nil || time.Since(b.last) < 200*time.Millisecond {
		return
	}
	b.last = time.Now()
	b.draw(done)
}

// Finish draws the full bar and ends the line.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.draw(b.total)
	fmt.Fprintln(b.w)
}

func (b *Bar) draw(done int) {
	const width = 30
	frac := min(float64(done)/float64(b.total), 1)
	n := int(frac * width)
	fmt.Fprintf(b.w, "\r%-24s [%s%s] %3.0f%% %d/%d jobs %s", b.label, strings.Repeat("#", n), strings.Repeat(".", width-n),
		frac*100, done, b.total, time.Since(b.start).Round(100*time.Millisecond))
}
