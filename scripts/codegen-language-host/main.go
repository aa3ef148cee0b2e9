// A language host that only generates SDKs, for `pulumi package gen-sdk --language python|go|dotnet`
// on machines where the official pulumi-language-python, -go and -dotnet cannot be built (the Go
// module proxy serves none of them). One binary installed under the three names: its name says
// which of Pulumi's own code generators (pkg/v3 codegen, the ones those hosts call) it runs. It
// runs no program: everything but GeneratePackage answers Unimplemented.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	dotnetgen "github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pythongen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	language string
}

func main() {
	flag.String("tracing", "", "accepted for compatibility")
	flag.String("root", "", "accepted for compatibility")
	flag.Parse()
	language := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-")
	h := &host{language: language}
	http.DefaultTransport = logoTransport{next: http.DefaultTransport}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-%s: %v\n", language, err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-%s: %v\n", language, err)
		os.Exit(1)
	}
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (h *host) Handshake(
	context.Context, *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

// GeneratePackage binds the schema with the engine's loader and writes what the language's code
// generator makes, as the official host does.
func (h *host) GeneratePackage(
	_ context.Context, req *pulumirpc.GeneratePackageRequest,
) (*pulumirpc.GeneratePackageResponse, error) {
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, err
	}
	cached := schema.NewCachedLoader(loader)
	pkg, diags, err := schema.BindSpec(spec, cached, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	tool := "pulumi-language-" + h.language
	var files map[string][]byte
	switch h.language {
	case "python":
		files, err = pythongen.GeneratePackage(tool, pkg, req.GetExtraFiles(), cached)
	case "go":
		files, err = gogen.GeneratePackage(tool, pkg, req.GetLocalDependencies())
	case "dotnet":
		files, err = dotnetgen.GeneratePackage(tool, pkg, req.GetExtraFiles(), req.GetLocalDependencies())
	default:
		err = fmt.Errorf("no code generator for %q (this host is pulumi-language-python, -go or -dotnet)", h.language)
	}
	if err != nil {
		return nil, err
	}
	for name, data := range files {
		out := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return nil, err
		}
	}
	return &pulumirpc.GeneratePackageResponse{}, nil
}

// .NET's generator downloads Pulumi's logo for the NuGet package's icon when the schema names none;
// where that download fails (no network), the icon is a blank image instead of the whole SDK failing.
type logoTransport struct{ next http.RoundTripper }

func (t logoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	response, err := t.next.RoundTrip(req)
	if err == nil || !strings.HasSuffix(req.URL.Path, "/pulumi_logo_64x64.png") {
		return response, err
	}
	var blank bytes.Buffer
	if err := png.Encode(&blank, image.NewNRGBA(image.Rect(0, 0, 64, 64))); err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(&blank), Request: req,
	}, nil
}
