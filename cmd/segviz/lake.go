package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

const lakeHelp = `Usage: segviz lake index|files|rebuild [flags] ...

The indexer: a partition's committed records as Parquet data files with
exact statistics, in a SQL catalog (SQLite or PostgreSQL). It lives in its
own module (github.com/segkit/segkit/lake), so that Parquet and the SQL
drivers stay out of segviz: "segviz lake ..." runs the segviz-lake
command, found on PATH, with the same arguments, and exits with its
status:

  segviz lake index --catalog sqlite:PATH|postgres://... [--once] SOURCE
  segviz lake files --catalog ... [--where EXPR] [--json]
  segviz lake rebuild --catalog ... --dir DIR|--broker kafka://... FILE-ID > f.parquet

SOURCE is a partition directory, a log directory, or a topic on a live
cluster: kafka://HOST:PORT[,HOST:PORT...]/TOPIC (read_committed).

Install it with
  go install github.com/segkit/segkit/lake/cmd/segviz-lake@latest
or, from a clone, (cd lake && go install ./cmd/segviz-lake). "segviz lake
--help" says this; "segviz-lake --help" describes its commands.

Exit status: segviz-lake's; 3 when it is not installed (or cannot run).
`

// lakeCommand is the name of the indexer's command, looked up on PATH.
const lakeCommand = "segviz-lake"

func runLake(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		if len(args) == 0 {
			fmt.Fprint(stderr, lakeHelp)
			return exitUsage
		}
		fmt.Fprint(stdout, lakeHelp)
		return exitOK
	}
	bin, err := exec.LookPath(lakeCommand)
	if err != nil {
		fmt.Fprintf(stderr, "segviz lake: %s is not installed (not on PATH): go install github.com/segkit/segkit/lake/cmd/segviz-lake@latest, or from a clone (cd lake && go install ./cmd/segviz-lake)\n", lakeCommand)
		return exitFailure
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "segviz lake: %s: %v\n", bin, err)
		return exitFailure
	}
	return exitOK
}
