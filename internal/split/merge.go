package split

import "sort"

// A two-phase merge splits the merge of a sorted list, some of whose
// entries are dropped, with a sorted list of adds across parts of the
// old list run side by side. In the first phase each part counts the
// entries that stay and notes the last of them (MergePart's Kept and
// Last); PlaceAdds then gives each part its adds and the index its
// output starts at; in the second phase each part writes its own
// output. An add goes right before the first staying entry it ranks
// above (the order must be total, and no add may equal a staying
// entry), so the result is the serial merge's.

// MergePart is one part of the old list in a two-phase merge: how many
// of its entries stay, the index of the last that does (-1: none), the
// adds merged before its entries (adds[Lo:Hi]) and the output index its
// entries start at.
type MergePart struct {
	Kept, Last int
	Lo, Hi     int
	Out        int
}

// PlaceAdds sets each part's Lo, Hi and Out from the parts' Kept and
// Last: a part takes the adds that rank above its last staying entry
// and not above an earlier part's, found by binary search (notBefore(a,
// last): add a does not rank above the old entry at index last).
// keptAll is how many old entries stay in all, addsAt how many adds the
// parts took; the rest, adds[addsAt:], go last, from output index
// keptAll+addsAt.
func PlaceAdds(parts []MergePart, nAdds int, notBefore func(a, last int) bool) (keptAll, addsAt int) {
	for k := range parts {
		pa := &parts[k]
		pa.Lo, pa.Out = addsAt, keptAll+addsAt
		if pa.Last >= 0 {
			from := addsAt
			addsAt += sort.Search(nAdds-from, func(x int) bool { return notBefore(from+x, pa.Last) })
		}
		pa.Hi, keptAll = addsAt, keptAll+pa.Kept
	}
	return keptAll, addsAt
}
