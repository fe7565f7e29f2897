package devcluster

import (
	"maps"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/driver"
)

// The cluster spells out the driver's default chroot to add workloads/;
// the two lists must not drift apart.
func TestDriverChrootMatchesDriverDefault(t *testing.T) {
	want := slices.Sorted(maps.Keys(driver.DefaultChrootEnv))
	got := slices.Sorted(slices.Values(driverChroot))
	if !slices.Equal(got, want) {
		t.Fatalf("devcluster chroot %v, driver default %v", got, want)
	}
	for k, v := range driver.DefaultChrootEnv {
		if k != v {
			t.Fatalf("driver default maps %s to %s; devcluster assumes same paths", k, v)
		}
	}
}
