package driver

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/helper/pluginutils/hclutils"
)

func TestIsolationConfig_ParseAndDefaults(t *testing.T) {
	var c Config
	hclutils.NewConfigParser(configSpec).ParseHCL(t, `
config {
  allow_root   = true
  denied_users = ["daemon"]
  default_user = "trainer"
  no_isolation = true
  device_dir   = "/tmp/fake-dev"
  nomad_address = "http://127.0.0.1:4646"
  checkpoint_retention = "24h"
}`, &c)
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	if !c.AllowRoot || !c.NoIsolation || c.DefaultUser != "trainer" || !slices.Equal(c.DeniedUsers, []string{"daemon"}) ||
		c.DeviceDir != "/tmp/fake-dev" || c.NomadAddress != "http://127.0.0.1:4646" {
		t.Fatalf("decoded %+v", c.IsolationConfig)
	}
	if len(c.ChrootEnv) != len(DefaultChrootEnv) || c.ChrootEnv["/usr"] != "/usr" {
		t.Errorf("chroot_env default = %v", c.ChrootEnv)
	}

	var d Config
	hclutils.NewConfigParser(configSpec).ParseHCL(t, `config {}`, &d)
	d = d.withDefaults()
	if d.NoIsolation || d.AllowRoot || d.DefaultUser != "nobody" || d.DeviceDir != "/dev" || d.CheckpointRetention != "168h0m0s" {
		t.Errorf("safe defaults: %+v", d.IsolationConfig)
	}
}

func TestIsolationConfig_BadValues(t *testing.T) {
	iso := func(f func(*IsolationConfig)) Config {
		c := Config{}
		f(&c.IsolationConfig)
		return c
	}
	cases := []struct {
		name string
		conf Config
		want string
	}{
		{"relative host path", iso(func(c *IsolationConfig) { c.ChrootEnv = map[string]string{"usr": "/usr"} }), `chroot_env: host path "usr" must be absolute`},
		{"relative task path", iso(func(c *IsolationConfig) { c.ChrootEnv = map[string]string{"/usr": "usr"} }), `task path "usr"`},
		{"over the alloc dir", iso(func(c *IsolationConfig) { c.ChrootEnv = map[string]string{"/data": "/alloc/data"} }), `task path "/alloc/data" is reserved`},
		{"over the root", iso(func(c *IsolationConfig) { c.ChrootEnv = map[string]string{"/": "/"} }), `task path "/" is reserved`},
		{"default user denied", iso(func(c *IsolationConfig) { c.DeniedUsers = []string{"nobody"} }), `default_user: "nobody" is in denied_users`},
		{"empty denied user", iso(func(c *IsolationConfig) { c.DeniedUsers = []string{" "} }), "denied_users[0]: must not be empty"},
		{"relative device dir", iso(func(c *IsolationConfig) { c.DeviceDir = "dev" }), `device_dir: "dev" must be an absolute path`},
		{"library dir /", iso(func(c *IsolationConfig) { c.GPULibraryDirs = []string{"/"} }), "gpu_library_dirs[0]"},
		{"bad retention", iso(func(c *IsolationConfig) { c.CheckpointRetention = "a week" }), `checkpoint_retention: "a week"`},
		{"negative retention", iso(func(c *IsolationConfig) { c.CheckpointRetention = "-1h" }), `checkpoint_retention: "-1h"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.conf.withDefaults().validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestResolveTaskUser(t *testing.T) {
	c := IsolationConfig{}.withDefaults()
	if u, err := c.resolveTaskUser(""); err != nil || u.Name != "nobody" || u.UID == 0 {
		t.Fatalf("default user: %+v %v", u, err)
	}
	if _, err := c.resolveTaskUser("no-such-user-caravan"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("unknown user: %v", err)
	}
	if _, err := c.resolveTaskUser("root"); err == nil || !strings.Contains(err.Error(), "allow_root") {
		t.Errorf("root: %v", err)
	}
	c.AllowRoot = true
	if u, err := c.resolveTaskUser("root"); err != nil || u.UID != 0 {
		t.Errorf("root allowed: %+v %v", u, err)
	}
	c.DeniedUsers = []string{"root"}
	if _, err := c.resolveTaskUser("root"); err == nil || !strings.Contains(err.Error(), "denied_users") {
		t.Errorf("denied wins over allow_root: %v", err)
	}
}

func TestParseLdconfig(t *testing.T) {
	out := `3 libs found in cache '/etc/ld.so.cache'
	libcuda.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libcuda.so.1
	libnvidia-ml.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libnvidia-ml.so.1
	libm.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libm.so.6
`
	dirs := parseLdconfig(out, driverLibraries)
	if !slices.Equal(dirs, []string{"/usr/local/nvidia/lib64"}) {
		t.Fatalf("dirs %v", dirs)
	}
	if !coveredByChroot("/usr/lib/x86_64-linux-gnu", DefaultChrootEnv) || coveredByChroot("/opt/nvidia/lib", DefaultChrootEnv) {
		t.Error("coveredByChroot")
	}
	// /usr/local/nvidia/lib64 is under /usr, shown at the same path.
	if got := gpuLibraryDirs(IsolationConfig{ChrootEnv: map[string]string{"/lib": "/lib"}, GPULibraryDirs: []string{"/x"}}); !slices.Equal(got, []string{"/x"}) {
		t.Errorf("configured gpu_library_dirs = %v", got)
	}
}

// ldconfig's output is read, not trusted: nothing it prints may crash
// the driver or yield a relative directory.
func FuzzParseLdconfig(f *testing.F) {
	f.Add("\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/libcuda.so.1\n")
	f.Add(" => \n=>=>\tlibcuda.so.1 => relative/libcuda.so.1")
	f.Fuzz(func(t *testing.T, out string) {
		for _, d := range parseLdconfig(out, driverLibraries) {
			if !strings.HasPrefix(d, "/") {
				t.Fatalf("relative dir %q from %q", d, out)
			}
		}
	})
}
