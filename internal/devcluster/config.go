package devcluster

import (
	"fmt"
	"strings"
)

// GPUs are the simulated GPUs each client's caravan driver declares.
type GPUs struct {
	Model     string
	MemoryMiB int
	Count     int
}

// agentConfig renders one agent's HCL. server and client say which roles it
// plays; servers lists the RPC addresses a client-only agent joins.
type agentConfig struct {
	Name      string
	DataDir   string
	PluginDir string
	HTTP, RPC int
	Serf      int
	Server    bool
	Client    bool
	Servers   []string
	GPUs      GPUs
	RawExec   bool
	Extra     string
	// ServerExtra goes inside the server block (server agents only).
	ServerExtra string
	// PluginExtra goes inside the caravan-driver config block.
	PluginExtra string
	// Workloads is a host folder jobspecs run code from (the repository's
	// workloads/); isolated tasks see it, read-only, at TaskWorkloads.
	Workloads string
}

// driverChroot is the caravan driver's default chroot_env
// (driver.DefaultChrootEnv; a driver test keeps the two in step). Setting
// chroot_env replaces the default, so the cluster spells it out to add
// the workloads folder.
var driverChroot = []string{"/bin", "/etc", "/lib", "/lib32", "/lib64", "/sbin", "/usr", "/run/resolvconf", "/run/systemd/resolve",
	"/opt/caravan/workloads"}

// TaskWorkloads is where isolated tasks of a local cluster find the
// repository's workloads/ (the jobspecs' default): a fixed path, because
// the clone may live under /tmp, which is every task's own.
const TaskWorkloads = "/opt/caravan/workloads"

// chrootEnv renders chroot_env with the workloads folder at TaskWorkloads,
// or "" without one.
func (c agentConfig) chrootEnv() string {
	if c.Workloads == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("    chroot_env {\n")
	for _, p := range driverChroot {
		if p != TaskWorkloads {
			fmt.Fprintf(&b, "      %q = %q\n", p, p)
		}
	}
	fmt.Fprintf(&b, "      %q = %q\n", c.Workloads, TaskWorkloads)
	b.WriteString("    }\n")
	return b.String()
}

func (c agentConfig) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name = %q\ndata_dir = %q\nplugin_dir = %q\n", c.Name, c.DataDir, c.PluginDir)
	fmt.Fprintf(&b, "bind_addr = \"127.0.0.1\"\nlog_level = \"DEBUG\"\ndisable_update_check = true\n")
	fmt.Fprintf(&b, "ports {\n  http = %d\n  rpc = %d\n  serf = %d\n}\n", c.HTTP, c.RPC, c.Serf)
	fmt.Fprintf(&b, "advertise {\n  http = \"127.0.0.1\"\n  rpc = \"127.0.0.1\"\n  serf = \"127.0.0.1\"\n}\n")
	// The fs and logs APIs build a client per call whose idle connections
	// linger; tests poll them, so lift the per-client connection cap. Every
	// agent here (and every simulated node of internal/nodesim) connects from
	// 127.0.0.1, so the per-address RPC cap (100) goes too.
	b.WriteString("limits {\n  http_max_conns_per_client = 0\n  rpc_max_conns_per_client = 0\n}\n")
	if c.Server {
		fmt.Fprintf(&b, "server {\n  enabled = true\n  bootstrap_expect = 1\n%s}\n", indent(c.ServerExtra))
	}
	if c.Client {
		b.WriteString(c.clientBlock())
		b.WriteString(c.pluginBlocks())
	}
	b.WriteString(c.Extra)
	return b.String()
}

func (c agentConfig) clientBlock() string {
	var b strings.Builder
	// Allocations advertise loopback addresses: everything a local cluster
	// (and its tests) sends stays on 127.0.0.1, never the host's own
	// interface addresses.
	b.WriteString("client {\n  enabled = true\n  network_interface = \"lo\"\n")
	if len(c.Servers) > 0 {
		fmt.Fprintf(&b, "  servers = [%q]\n", strings.Join(c.Servers, `", "`))
	}
	// The cloud fingerprinters probe metadata services that do not exist here,
	// and the AWS one refuses to start when AWS_CA_BUNDLE is set.
	b.WriteString("  options {\n    \"fingerprint.denylist\" = \"env_aws,env_gce,env_azure,env_digitalocean\"\n  }\n}\n")
	return b.String()
}

func (c agentConfig) pluginBlocks() string {
	var b strings.Builder
	b.WriteString("plugin \"caravan-driver\" {\n  config {\n")
	if c.GPUs.Count > 0 {
		fmt.Fprintf(&b, "    gpu_backend = \"simulated\"\n    simulated_gpus {\n      model = %q\n      memory_mib = %d\n      count = %d\n    }\n",
			c.GPUs.Model, c.GPUs.MemoryMiB, c.GPUs.Count)
	}
	// The driver reads a job's create index from its own agent, to key
	// checkpoints to one run of the job.
	fmt.Fprintf(&b, "    nomad_address = \"http://127.0.0.1:%d\"\n", c.HTTP)
	b.WriteString(c.chrootEnv())
	if c.PluginExtra != "" {
		fmt.Fprintf(&b, "    %s\n", c.PluginExtra)
	}
	fmt.Fprintf(&b, "    state_dir = %q\n  }\n}\n", c.DataDir+"/caravan")
	if c.RawExec {
		b.WriteString("plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n")
	}
	return b.String()
}

// indent puts each line of s two spaces in, ending with a newline ("" stays "").
func indent(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}
