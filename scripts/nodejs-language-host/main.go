// A minimal Pulumi language host for Node.js programs, used only when the official
// pulumi-language-nodejs cannot be built here.
//
// Why it exists: the Go module proxy these machines reach does not serve the official host's
// module (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3) at any release commit,
// while it does serve the CLI (pkg/v3) and the SDK (sdk/v3). This host implements the part of the
// LanguageRuntime protocol that `pulumi preview/up/destroy/refresh` needs for a Node.js program:
// it launches @pulumi/pulumi's own program runner (`@pulumi/pulumi/cmd/run`) with the arguments and
// environment the engine expects, and reports the outcome. Everything else (code generation,
// packing) answers Unimplemented, which the engine handles. Plugins are run the way Pulumi's
// distribution runs them: a policy pack (`pulumi preview --policy-pack DIR`) through the
// `pulumi-analyzer-policy` launcher beside this host (or on PATH), which starts @pulumi/pulumi's
// policy-pack runner with the project's node; any other plugin (a component provider given by
// its folder, e.g. in a YAML program's `packages:`) with @pulumi/pulumi's plugin runner. Their
// dependencies come with the npm package that holds them, so InstallDependencies has nothing to do.
// scripts/ensure-pulumi builds it from sdk/v3 at the same release as the CLI.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The runner's exit code for "the program already printed an actionable message" (see
// @pulumi/pulumi cmd/run): the engine should stop without adding its own error.
const exitedAfterUserActionableMessage = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	tracing       string
}

func main() {
	tracing := flag.String("tracing", "", "tracing endpoint, passed on to the program")
	flag.String("runtime", "nodejs", "accepted for compatibility; only nodejs is supported")
	// Plugin loaders (pulumi-language-yaml v1.25.0's among them) still pass the project root.
	flag.String("root", "", "accepted for compatibility; the engine sends the program's directory with each request")
	showVersion := flag.Bool("version", false, "print the plugin version and exit")
	// --logtostderr and -v are registered by the SDK's logging package.
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Version)
		return
	}

	h := &host{tracing: *tracing}
	if args := flag.Args(); len(args) > 0 {
		h.engineAddress = args[len(args)-1]
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if h.engineAddress != "" {
		// Exit when the engine goes away, as every plugin must.
		if err := rpcutil.Healthcheck(ctx, h.engineAddress, 5*time.Minute, cancel); err != nil {
			fail(fmt.Errorf("could not start the health check: %w", err))
		}
	}
	stop := make(chan bool)
	go func() { <-ctx.Done(); close(stop) }()

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: stop,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fail(fmt.Errorf("could not start the language host: %w", err))
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %v\n", err)
	os.Exit(1)
}

func (h *host) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// Plugins are found on PATH (automatic acquisition is off), so nothing is declared here.
func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetProgramDependencies(
	context.Context, *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *host) RuntimeOptionsPrompts(
	context.Context, *pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

func (h *host) About(context.Context, *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{Executable: node, Version: strings.TrimSpace(string(out))}, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the PATH: " + err.Error()}, nil
	}
	runner, err := resolveFrom(ctx, node, info.GetProgramDirectory(), "@pulumi/pulumi/cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	args := []string{runner}
	add := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("root-directory", info.GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", info.GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("tracing", h.tracing)
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	env, err := programEnvironment(req)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = info.GetProgramDirectory()
	cmd.Env = env
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == exitedAfterUserActionableMessage {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{Error: "could not run the Node.js program: " + err.Error()}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// resolveFrom resolves one of @pulumi/pulumi's runners from a program's or plugin's directory, as
// the official host does.
func resolveFrom(ctx context.Context, node, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, node, "-e", "console.log(require.resolve(process.argv[1]))", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("could not find @pulumi/pulumi in %s (run 'npm ci'): %w", dir, err)
	}
	return filepath.Clean(strings.TrimSpace(string(out))), nil
}

// programEnvironment passes configuration the way @pulumi/pulumi reads it: PULUMI_CONFIG holds a
// JSON object keyed "<namespace>:config:<name>", PULUMI_CONFIG_SECRET_KEYS the secret keys.
func programEnvironment(req *pulumirpc.RunRequest) ([]string, error) {
	cfg := make(map[string]string, len(req.GetConfig()))
	for k, v := range req.GetConfig() {
		key, err := config.ParseKey(k)
		if err != nil {
			return nil, err
		}
		cfg[key.Namespace()+":config:"+key.Name()] = v
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "PULUMI_CONFIG="+string(cfgJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON))
	if opts := req.GetInfo().GetOptions().AsMap(); opts["typescript"] == true {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	return env, nil
}

// RunPlugin runs a Node.js plugin from its directory and streams its output back; the engine reads
// the plugin's port from the first line of stdout. A policy pack (kind "analyzer") runs as
// `pulumi-analyzer-policy <args> .` (the launcher Pulumi's distribution ships for Node.js packs: it
// starts @pulumi/pulumi/cmd/run-policy-pack); any other plugin as `node <@pulumi/pulumi/cmd/run-plugin>
// <dir> <args>` in the engine's directory, the runner resolved from the plugin's, as the official host does.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	dir := req.GetInfo().GetProgramDirectory()
	if dir == "" {
		dir = req.GetPwd()
	}
	var command string
	var args []string
	cwd := dir
	if req.GetKind() == "analyzer" {
		launcher, err := analyzerLauncher()
		if err != nil {
			return err
		}
		command, args = launcher, append(append([]string{}, req.GetArgs()...), ".")
	} else {
		node, err := exec.LookPath("node")
		if err != nil {
			return fmt.Errorf("could not find node on the PATH: %w", err)
		}
		runner, err := resolveFrom(server.Context(), node, dir, "@pulumi/pulumi/cmd/run-plugin")
		if err != nil {
			return err
		}
		command, args = node, append([]string{runner, dir}, req.GetArgs()...)
		// In the engine's directory (the program's), where Pulumi starts every provider: a component
		// provider resolves the program's relative paths against it.
		if req.GetPwd() != "" {
			cwd = req.GetPwd()
		}
	}
	cmd := exec.CommandContext(server.Context(), command, args...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), req.GetEnv()...)
	var mu sync.Mutex
	send := func(response *pulumirpc.RunPluginResponse) {
		mu.Lock()
		defer mu.Unlock()
		_ = server.Send(response)
	}
	cmd.Stdout = writerFunc(func(p []byte) {
		send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: append([]byte{}, p...)}})
	})
	cmd.Stderr = writerFunc(func(p []byte) {
		send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: append([]byte{}, p...)}})
	})
	code := int32(0)
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return fmt.Errorf("could not run %s: %w", command, err)
		}
		code = int32(exitErr.ExitCode())
	}
	send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: code}})
	return nil
}

// InstallDependencies has nothing to install: a plugin's dependencies are installed with the npm
// package that holds it, and a program's by `npm ci`. It answers at once, so the engine goes on.
func (h *host) InstallDependencies(
	*pulumirpc.InstallDependenciesRequest, pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	return nil
}

// analyzerLauncher is `pulumi-analyzer-policy` beside this executable (where scripts/ensure-pulumi
// puts both), else on PATH.
func analyzerLauncher() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "pulumi-analyzer-policy")
		if info, err := os.Stat(beside); err == nil && !info.IsDir() {
			return beside, nil
		}
	}
	path, err := exec.LookPath("pulumi-analyzer-policy")
	if err != nil {
		return "", fmt.Errorf("pulumi-analyzer-policy is not beside the language host nor on PATH (run scripts/ensure-pulumi): %w", err)
	}
	return path, nil
}

type writerFunc func(p []byte)

func (w writerFunc) Write(p []byte) (int, error) {
	w(p)
	return len(p), nil
}
