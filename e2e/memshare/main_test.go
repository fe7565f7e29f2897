// Package memshare_e2e runs memshare on a real Nomad cluster (a server and
// two clients, each client's caravan plugin with a memshare block): a
// data-prep donor job on both clients lends its idle reservation, and a
// Python consumer job spills batches to remote memory through
// CARAVAN_REMOTE_MEMORY_URI (Debian's python3-libnbd) and verifies them.
package memshare_e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// key is the memshare secret both plugins share.
const key = "e2e-memshare-key-0123456789abcdef"

var (
	cluster *harness.Cluster
	donors  []string // each client's lease API address
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	ports, err := harness.FreePorts(4)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	var blocks []string
	for i := range 2 {
		nbdAddr, apiAddr := fmt.Sprintf("127.0.0.1:%d", ports[2*i]), fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])
		donors = append(donors, apiAddr)
		blocks = append(blocks, fmt.Sprintf("donor {\n node = \"client-%d\"\n nbd_addr = %q\n api_addr = %q\n}\n", i+1, nbdAddr, apiAddr))
	}
	each := func(i int) string {
		return fmt.Sprintf("memshare {\n key = %q\n node = \"client-%d\"\n nbd_addr = %q\n api_addr = %q\n"+
			" slab_size = \"4MiB\"\n headroom = \"64MiB\"\n data_shards = 1\n parity_shards = 1\n%s}\n",
			key, i+1, fmt.Sprintf("127.0.0.1:%d", ports[2*i]), donors[i], strings.Join(blocks, ""))
	}
	return harness.RunCluster(m, harness.Options{Clients: 2, PluginConfigEach: each}, &cluster)
}
