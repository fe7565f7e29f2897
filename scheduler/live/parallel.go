package live

import "sync"

// inParallel runs f for 0..n-1, at most width at once, and returns each
// one's error. Nomad calls that each wait on a Raft commit or a client
// (admissions, node reads, progress reads, state parts) go this way.
func inParallel(n, width int, f func(i int) error) []error {
	errs := make([]error, n)
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}
