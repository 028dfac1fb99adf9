package s3_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// versitygwKind is the Versity S3 Gateway with its posix backend: each
// bucket a directory under the data directory, each object a file, its
// metadata in extended attributes. One process, one port, the root
// identity's keys as the only credentials.
var versitygwKind = serverKind{
	name: "versitygw",
	binary: func() (string, error) {
		return scriptPath("SEGKIT_VERSITYGW", "versitygw.sh", "versitygw")
	},
	install: "scripts/versitygw.sh install",
	start: func(bin, dir string) (*exec.Cmd, int, error) {
		ports, err := freePorts(1)
		if err != nil {
			return nil, 0, err
		}
		data := filepath.Join(dir, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
			return nil, 0, err
		}
		// The same flags as scripts/versitygw.sh serve.
		return exec.Command(bin, "--access", testAccessKey, "--secret", testSecretKey,
			"--port", "127.0.0.1:"+strconv.Itoa(ports[0]), "--quiet", "posix", data), ports[0], nil
	},
}
