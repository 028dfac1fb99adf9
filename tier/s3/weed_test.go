package s3_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// weedKind is SeaweedFS's `weed mini`: master, volume server, filer and
// S3 in one process, with one identity from an s3.json.
var weedKind = serverKind{
	name: "weed",
	binary: func() (string, error) {
		return scriptPath("SEGKIT_WEED", "seaweedfs.sh", "SeaweedFS")
	},
	install: "scripts/seaweedfs.sh install",
	start: func(bin, dir string) (*exec.Cmd, int, error) {
		cfg := filepath.Join(dir, "s3.json")
		ident := fmt.Sprintf(`{"identities":[{"name":"segkit","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, testAccessKey, testSecretKey)
		if err := os.WriteFile(cfg, []byte(ident), 0o600); err != nil {
			return nil, 0, err
		}
		ports, err := freePorts(5)
		if err != nil {
			return nil, 0, err
		}
		data := filepath.Join(dir, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
			return nil, 0, err
		}
		return exec.Command(bin, weedArgs(data, cfg, ports)...), ports[0], nil
	},
}

// weedArgs are the arguments of the test server: `weed mini`, the
// all-in-one mode, with its extras (WebDAV, admin UI, Iceberg and Lance
// catalogs, telemetry) off and every port chosen here.
//
// SEGKIT_WEED_MODE=server runs `weed server -s3` instead (a master, a
// volume server, a filer and S3 in one process, without mini's defaults),
// to compare the two.
func weedArgs(data, cfg string, p []int) []string {
	if os.Getenv("SEGKIT_WEED_MODE") == "server" {
		return []string{"server", "-s3",
			"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
			"-s3.config=" + cfg, "-s3.port=" + strconv.Itoa(p[0]),
			"-master.port=" + strconv.Itoa(p[1]), "-filer.port=" + strconv.Itoa(p[2]), "-volume.port=" + strconv.Itoa(p[3]),
			"-master.volumeSizeLimitMB=64", "-volume.max=0",
		}
	}
	return []string{"mini",
		"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-s3.config=" + cfg, "-s3.port=" + strconv.Itoa(p[0]),
		"-master.port=" + strconv.Itoa(p[1]), "-filer.port=" + strconv.Itoa(p[2]), "-volume.port=" + strconv.Itoa(p[3]),
		"-admin.port=" + strconv.Itoa(p[4]), "-admin.port.legacy=0", "-admin.ui=false",
		"-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
		"-master.volumeSizeLimitMB=64",
	}
}
