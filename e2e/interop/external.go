package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// external is a checker in another language: a command that follows the
// RESULT-line contract of interop/python/check.py.
type external struct {
	client string
	// setup installs the client from the project's own files; it returns
	// an error with the installer's output.
	setup func(ctx context.Context, root string) error
	// command is the checker's argv for a run.
	command func(root, bootstrap, prefix string, count int) []string
	// saslCommand is the checker's argv for its sasl_ssl step, to which
	// the step adds the CA file, mechanism, user and password; nil: none.
	saslCommand func(root, addr, topic string, n int) []string
	dir         string // working directory, relative to the root
	// env is added to the checker's environment, when set.
	env func(root string) []string
}

// run sets the client up and runs its checker.
func (e external) run(ctx context.Context, root, bootstrap, prefix string, count int) *Report {
	rep := newReport(e.client)
	if err := e.setup(ctx, root); err != nil {
		rep.failAll("installing the client: " + err.Error())
		return rep
	}
	argv := e.command(root, bootstrap, prefix, count)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(root, e.dir)
	if e.env != nil {
		cmd.Env = append(os.Environ(), e.env(root)...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	rep.Log = stdout.String() + stderr.String()
	if perr := parseChecker(rep, &stdout); perr != nil {
		rep.failAll(perr.Error())
	}
	if err != nil {
		rep.failAll(fmt.Sprintf("checker %s: %v: %s", strings.Join(argv, " "), err, tailLines(stderr.String(), 5)))
	}
	if len(rep.Results) < len(scenarioFeatures) {
		rep.failAll("checker gave no result: " + tailLines(rep.Log, 5))
	}
	return rep
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}

// runLogged runs an installer command in dir, returning its output on error.
func runLogged(ctx context.Context, dir string, name string, args ...string) error {
	began := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	slog.Info("setup", "cmd", name+" "+strings.Join(args, " "), "dir", dir, "took", time.Since(began).Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, tailLines(string(out), 10))
	}
	return nil
}

// newer reports whether file is missing or older than any of deps.
func stale(file string, deps ...string) bool {
	st, err := os.Stat(file)
	if err != nil {
		return true
	}
	for _, d := range deps {
		if ds, err := os.Stat(d); err == nil && ds.ModTime().After(st.ModTime()) {
			return true
		}
	}
	return false
}

// pythonSetup makes interop/python/.venv from requirements.txt; where
// python3 has no venv module (Debian without python3-venv) it installs
// into .venv/site with pip --target instead, which pythonCommand then puts
// on PYTHONPATH.
func pythonSetup(ctx context.Context, root string) error {
	dir := filepath.Join(root, "interop", "python")
	stamp := filepath.Join(dir, ".venv", "installed")
	if !stale(stamp, filepath.Join(dir, "requirements.txt")) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, ".venv", "bin", "python")); err != nil {
		if verr := runLogged(ctx, dir, "python3", "-m", "venv", ".venv"); verr != nil {
			slog.Warn("no venv; installing with pip --target", "err", verr)
			os.RemoveAll(filepath.Join(dir, ".venv"))
			if err := runLogged(ctx, dir, "python3", "-m", "pip", "install", "-q", "--target", filepath.Join(".venv", "site"), "-r", "requirements.txt"); err != nil {
				return err
			}
			return os.WriteFile(stamp, nil, 0o644)
		}
	}
	if err := runLogged(ctx, dir, filepath.Join(".venv", "bin", "pip"), "install", "-q", "-r", "requirements.txt"); err != nil {
		return err
	}
	return os.WriteFile(stamp, nil, 0o644)
}

// pythonInterpreter is the venv's python, or python3 for a --target install.
func pythonInterpreter(root string) string {
	venv := filepath.Join(root, "interop", "python", ".venv", "bin", "python")
	if _, err := os.Stat(venv); err == nil {
		return venv
	}
	return "python3"
}

// nodeSetup runs npm ci in interop/node (package-lock.json pins kafkajs).
func nodeSetup(ctx context.Context, root string) error {
	dir := filepath.Join(root, "interop", "node")
	stamp := filepath.Join(dir, "node_modules", ".package-lock.json")
	if !stale(stamp, filepath.Join(dir, "package-lock.json")) {
		return nil
	}
	return runLogged(ctx, dir, "npm", "ci", "--no-audit", "--no-fund")
}

// javaSetup builds interop/java (kafka-clients and the tools' jars) when
// Main.class is older than pom.xml or any of the sources (Matrix.java
// holds the matrix checker; an edit there alone must rebuild too).
func javaSetup(ctx context.Context, root string) error {
	dir := filepath.Join(root, "interop", "java")
	main := filepath.Join(dir, "target", "classes", "io", "samsa", "interop", "Main.class")
	sources, err := filepath.Glob(filepath.Join(dir, "src", "main", "java", "io", "samsa", "interop", "*.java"))
	if err != nil {
		return err
	}
	if !stale(main, append(sources, filepath.Join(dir, "pom.xml"))...) {
		return nil
	}
	return runLogged(ctx, dir, "mvn", "-q", "-B", "package", "-DskipTests")
}

func javaClasspath(root string) string {
	dir := filepath.Join(root, "interop", "java")
	return filepath.Join(dir, "target", "classes") + ":" + filepath.Join(dir, "target", "lib", "*")
}

func externals() []external {
	py := func(client string) external {
		return external{client: client, setup: pythonSetup, dir: "interop/python",
			command: func(root, b, p string, n int) []string {
				return []string{pythonInterpreter(root), "check.py", client, b, p, strconv.Itoa(n)}
			},
			saslCommand: func(root, addr, topic string, n int) []string {
				return []string{pythonInterpreter(root), "check.py", client + ":sasl_ssl", addr, topic, strconv.Itoa(n)}
			},
			env: func(root string) []string {
				return []string{"PYTHONPATH=" + filepath.Join(root, "interop", "python", ".venv", "site")}
			}}
	}
	return []external{
		{client: "java kafka-clients", setup: javaSetup, dir: "interop/java",
			command: func(root, b, p string, n int) []string {
				return []string{"java", "-Xmx512m", "-cp", javaClasspath(root), "io.samsa.interop.Main", "matrix", b, p, strconv.Itoa(n)}
			},
			saslCommand: func(root, addr, topic string, n int) []string {
				return []string{"java", "-Xmx256m", "-cp", javaClasspath(root), "io.samsa.interop.Main", "sasl-ssl", addr, topic, strconv.Itoa(n)}
			}},
		py("confluent-kafka"),
		py("kafka-python"),
		{client: "kafkajs", setup: nodeSetup, dir: "interop/node",
			command: func(root, b, p string, n int) []string {
				return []string{"node", "check.js", b, p, strconv.Itoa(n)}
			},
			saslCommand: func(root, addr, topic string, n int) []string {
				return []string{"node", "check.js", "--sasl-ssl", addr, topic, strconv.Itoa(n)}
			}},
	}
}
