package aggsvc

import (
	"hash/fnv"
	"sort"
	"strconv"
)

// ringReplicas is the number of virtual nodes per instance; the Python client
// uses the same constant and hash, so both place a partition identically.
const ringReplicas = 64

// Ring spreads a job's partitions over several aggsvc instances by
// consistent hashing (FNV-1a 64 of "addr#i" for virtual nodes and of
// "job/step/partition" for keys, then splitmix64's finalizer): adding or losing an instance moves only the
// partitions that hashed to it.
type Ring struct {
	hashes []uint64
	owner  []int
	addrs  []string
}

// NewRing builds a ring over addrs (order does not matter).
func NewRing(addrs []string) *Ring {
	r := &Ring{addrs: append([]string(nil), addrs...)}
	sort.Strings(r.addrs)
	type vn struct {
		h uint64
		i int
	}
	var vs []vn
	for i, a := range r.addrs {
		for k := range ringReplicas {
			vs = append(vs, vn{fnv64(a + "#" + strconv.Itoa(k)), i})
		}
	}
	sort.Slice(vs, func(a, b int) bool { return vs[a].h < vs[b].h })
	for _, v := range vs {
		r.hashes = append(r.hashes, v.h)
		r.owner = append(r.owner, v.i)
	}
	return r
}

// Pick is the index (into Addrs) of the instance that owns a partition.
func (r *Ring) Pick(job string, step uint64, part uint32) int {
	h := fnv64(job + "/" + strconv.FormatUint(step, 10) + "/" + strconv.FormatUint(uint64(part), 10))
	i := sort.Search(len(r.hashes), func(i int) bool { return r.hashes[i] >= h })
	if i == len(r.hashes) {
		i = 0
	}
	return r.owner[i]
}

// Addrs are the ring's instances, sorted.
func (r *Ring) Addrs() []string { return r.addrs }

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return mix64(h.Sum64())
}

// mix64 is splitmix64's finalizer: FNV alone leaves the high bits of
// similar keys alike, which would put every partition on one instance.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}
