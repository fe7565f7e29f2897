// Package ledger is the node-local record of fractional GPU grants. Per GPU,
// granted fractions never sum past 1 and granted memory never past the total.
// It is persisted so a restarted plugin still knows what is taken.
package ledger

// Request is what one task asks of one GPU. Fraction in (0,1]; MemMiB 0 means
// "a share of memory proportional to Fraction". UUID, if set, pins the GPU
// (the scheduler's choice); otherwise the ledger picks best-fit.
type Request struct {
	Fraction float64
	MemMiB   uint64
	UUID     string
}

// Grant is what a task got.
type Grant struct {
	TaskID   string  `json:"task_id"`
	UUID     string  `json:"uuid"`
	Index    int     `json:"index"`
	Fraction float64 `json:"fraction"`
	MemMiB   uint64  `json:"mem_mib"`
}

// Usage is one GPU's committed share.
type Usage struct {
	UUID         string
	Index        int
	TotalMiB     uint64
	UsedFraction float64
	UsedMiB      uint64
	Tasks        int
}
