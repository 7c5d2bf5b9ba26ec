"""Explain a PyTorch-on-ROCm error: what it means, why it happens, what to do.

Give it an exception, or the text of an error or a whole log pasted from a terminal. The rules are
tried in order of *root cause* first (a missing GPU binary before the "No HIP GPUs" it leads to), so
a traceback is classified by its cause, not by a later symptom. Imports no torch: use it anywhere.

    >>> from helpers.diagnose import diagnose
    >>> diagnose("RuntimeError: No HIP GPUs are available").category
    'device_permissions'

Command line: ``python -m helpers.diagnose [FILE|-] [--json]`` (stdin when no file is given).
In a notebook, ``helpers.diagnose.install()`` prints the diagnosis under every traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from collections import deque
from dataclasses import asdict, dataclass, field, replace

# Three strings; helpers.device imports torch only inside its functions, so this module stays torch-free.
from helpers.device import DOCKER_GPU_FLAGS
from helpers.hardware import AMD_WHEEL_INDEX, ROCM_WHEEL_INDEX

HIP_DOCS = "https://pytorch.org/docs/stable/notes/hip.html"
ROCM_INSTALL = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html"
ROCM_DOCKER = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html"
ROCM_GPUS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html"


@dataclass(frozen=True)
class Diagnosis:
    category: str
    title: str
    cause: str
    fix: list[str] = field(default_factory=list)
    source: str = ""
    matched: str = ""  # the line of the input that decided it ("" for unknown)


@dataclass(frozen=True)
class Rule:
    category: str
    patterns: tuple[str, ...]  # case-insensitive regular expressions, searched anywhere in the text
    title: str
    cause: str
    fix: tuple[str, ...]
    source: str
    error_line: bool = False  # match only on a line that reports an error (for the name-only last resorts)


# Ordered: root causes first. The first rule with a match anywhere in the text wins.
RULES = (
    Rule(
        "illegal_instruction",
        (
            r"illegal_instruction",
            r"illegal instruction",
            r"SIGILL",
            r"valgrind: Unrecognised instruction",  # code for a newer CPU (AVX, AVX-512) than valgrind decodes
        ),
        "A binary uses instructions this CPU or GPU does not have",
        "torch (or an extension) was built for a newer CPU (e.g. AVX) or for a GPU target this card lacks.",
        (
            "Check the CPU flags: grep -o -w 'avx2\\|avx512f' /proc/cpuinfo | sort -u",
            "Install a wheel built for this machine (PyTorch's own index), not a third-party build",
            "On a consumer GPU with HSA_OVERRIDE_GFX_VERSION set: unset it and use a build that lists the GPU",
        ),
        ROCM_GPUS,
    ),
    Rule(
        "shared_lib_load",
        (
            # (not librccl-net.so: RCCL's optional network plugin, whose absence it logs as INFO and goes on)
            r"lib(amdhip64|hip\w*|roc\w*|MIOpen|hsa-runtime64|rccl(?!-net)|amd_comgr)"
            r"[\w.-]*\.so[\w.]*: "
            r"(cannot open shared object file|undefined (symbol|reference)(?! to .?std::))",  # (std::: cxx_runtime)
            r"lib(torch|c10)_hip\.so: undefined symbol",  # torch's ROCm half, built against other libraries
            r"/opt/rocm\S*/lib[\w.+-]*\.so[\w.]*: (cannot open shared object file|undefined symbol)",  # in /opt/rocm
            r"(Couldn't open|Could not load dynamic) (CUDA )?library '?lib(amdhip64|hip\w*|roc\w*|MIOpen|rccl)",
            # a ROCm function (also a C++ one, mangled: _Z22hipCreateSurfaceObject...) missing: another release
            r"undefined symbol: (_Z\d+)?(miopen|rocblas_|hipblas|hsa_|rccl|hip[A-Z])\w*",
            r"undefined reference to\W*(hsa_|hip[A-Z]|rocblas_|hipblas|miopen|rccl)\w*@",  # versioned: another release
            # Windows: a ROCm DLL, or a GPU DLL of torch that loads them (ZLUDA's stand-ins too), that did not load
            r"(amdhip64|hiprtc|rocblas|hipblas\w*|MIOpen|rccl)\w*\.dll was not found",
            r"Error loading \"[^\"]*\b(caffe2_nvrtc|torch_hip|c10_hip|amdhip64\w*)\.dll\" or one of its dependencies",
            r"MIOpen library not found",  # torch's warning when it cannot load MIOpen
            r"(Failed to load|Could not find module) '?(amdhip64|hiprtc|rocblas|hipblas|MIOpen|rccl|libsmi_\w+)"
            r"\w*\.dll",
            r"Error loading \"[^\"]*zluda[^\"]*\.dll\"",  # ZLUDA's stand-ins for CUDA's DLLs load the HIP SDK's
            r"ERROR: testSharedLibrariesLoad",  # TheRock's rocm_sdk test: a ROCm library of the wheel did not load
            # a symbol version a program was linked against, missing from the ROCm library it loads (another release)
            r"not defined in file lib(amdhip64|hip\w*|roc\w*|MIOpen|hsa-runtime64|rccl|amd_comgr)[\w.-]*\.so",
            r"rocm_sdk[/\\]__init__\.py\", line \d+, in (find_libraries|preload_libraries)",  # TheRock's wheels
        ),
        "A ROCm library that torch loads is missing or from another ROCm version",
        "At import, torch (or a package) loads ROCm's shared libraries: libamdhip64, libMIOpen, rocBLAS, ... One "
        "that is "
        "absent, built for another ROCm release, or shadowed by LD_LIBRARY_PATH fails with 'cannot open shared object "
        "file' or 'undefined symbol'.",
        (
            "Wheels from PyTorch's ROCm index bring their own ROCm libraries (ROCm 7.14+: as pip packages, "
            "rocm-sdk-*): remove LD_LIBRARY_PATH entries that point at another ROCm (/opt/rocm-X.Y, or "
            "/opt/rocm/core-X.Y from ROCm 7.14 on) and retry",
            "Keep one ROCm per environment: the wheel's index (rocmX.Y), or the rocm/pytorch image, not both mixed",
            "python -c \"import torch, os; print(os.listdir(os.path.join(os.path.dirname(torch.__file__), 'lib')))\"",
        ),
        ROCM_INSTALL,
    ),
    Rule(
        "cxx_runtime",
        (
            r"version [`'](GLIBCXX|CXXABI)_[\d.]+' not found",
            r"undefined reference to .?std::",  # linking a library built with a newer GCC
        ),
        "The C++ runtime loaded (libstdc++) is older than a library needs",
        "The library was built with a newer GCC than the libstdc++.so.6 the process loads first: most often the one "
        "in a conda environment, whose lib/ is searched before the system's.",
        (
            "conda install -c conda-forge libstdcxx-ng   # a newer libstdc++ inside the conda environment",
            'strings "$CONDA_PREFIX/lib/libstdc++.so.6" | grep GLIBCXX_3.4.3   # the versions a libstdc++ provides',
            "Or load the system's: LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6 python ... (Debian/Ubuntu)",
        ),
        "https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html",
    ),
    Rule(
        "compiler_crash",
        (
            r"Please submit a (full )?bug report",  # GCC's, and LLVM's (clang, lld) crash banner
            # a frame of an LLVM tool's crash backtrace (after LLVM's "Stack dump:"), in LLVM's form and in glibc's
            r"\(\S*/(llc|clang[\w+.-]*|ld\.lld|lld|opt)\+0x[0-9a-f]+\)",
            r"/(llc|clang[\w+.-]*|ld\.lld|lld|opt|hcc)\(_ZN4llvm\w+\+0x[0-9a-f]+\)",
            r"died due to signal \d+|internal compiler error|Killed signal terminated program cc1",
            r"UNREACHABLE executed at \S*clang",  # an assertion of clang's own code
        ),
        "The compiler itself crashed while building",
        "GCC or clang hit an internal error: a compiler bug, or the machine ran out of memory while many compile jobs "
        "ran at once. The code being compiled may be fine.",
        (
            "Build again with fewer parallel jobs: MAX_JOBS=2 pip install ... (torch.utils.cpp_extension reads "
            "MAX_JOBS), or ninja -j2 / make -j2",
            "dmesg | grep -i -m3 'killed process'   # did the out-of-memory killer stop the compiler?",
            "If it crashes on the same file every time: another compiler release, or clang (CC=clang CXX=clang++)",
        ),
        "https://gcc.gnu.org/bugs/",
    ),
    Rule(
        "nvidia_only_check",  # before wsl_runtime: an amdsmi warning printed before it is no cause
        (r"in _extract_arch_version\s+base = arch_string\.split\(",),
        "torch's check of NVIDIA compute capabilities met an AMD GPU",
        "torch.cuda checks at its first use that the GPU's compute capability (sm_XX) is among those the build was "
        "compiled for, on CUDA builds only. Here it read an architecture name without the sm_ form (an AMD gfx "
        "target): this environment's torch takes itself for a CUDA build while it runs on an AMD GPU.",
        (
            'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip, '
            'torch.cuda.get_arch_list())"',
            f"Reinstall torch and torchvision from one ROCm index in a fresh environment: pip install torch "
            f"torchvision --index-url {ROCM_WHEEL_INDEX}",
        ),
        ROCM_INSTALL,
    ),
    Rule(
        "wsl_runtime",
        (
            r"WSL environment detected",
            r"Can't initialize amdsmi",
            r"Module amdgpu not found in directory /lib/modules/\S*microsoft",  # WSL2's kernel has no amdgpu driver
            # torch.utils.collect_env on WSL2: a torch (ROCm's) that sees no GPU there
            r"microsoft-standard-WSL2[\s\S]{0,400}?Is CUDA available: False",
        ),
        "ROCm on WSL2: a limit of the WSL runtime",
        "On WSL2 the GPU is reached through the Windows driver: rocminfo can fail to allocate its resources, and "
        "amdsmi "
        "(the management library) cannot initialise there. The amdsmi warning alone is harmless: torch.cuda still "
        "works.",
        (
            "Install ROCm for WSL the way AMD's Radeon documentation describes (a supported Radeon GPU and driver)",
            'python -c "import torch; print(torch.cuda.is_available())"   # True: ignore the amdsmi warning',
        ),
        "https://rocm.docs.amd.com/projects/radeon/en/latest/index.html",
    ),
    Rule(
        "unknown",  # before wrong_wheel: an application falls back to "CPU-only torch" when ZLUDA does not load
        (r"Failed to load ZLUDA",),
        "ZLUDA, a translation layer that runs CUDA builds on AMD GPUs, did not load",
        "Some Windows applications run a CUDA build of torch on AMD GPUs through ZLUDA, which translates CUDA calls to "
        "HIP. It did not load, so the application fell back to the CPU. ZLUDA is no part of ROCm or PyTorch: the cause "
        "is in ZLUDA's setup (driver, HIP SDK, its own files).",
        (
            "Install the AMD driver and HIP SDK versions that the application's ZLUDA guide names, then start it again",
            "Or run a PyTorch ROCm build instead of ZLUDA where one exists for your system and GPU (Linux)",
        ),
        "https://github.com/vosen/ZLUDA",
    ),
    Rule(
        "wrong_wheel",
        (
            # (raised from c10/hip/: a ROCm build; on the next line, or on the same one in an escaped message)
            r"No CUDA GPUs are available(?![^\n]*(\n[^\n]*)?c10[/\\]hip[/\\])",
            r"cudaGetDeviceCount\(\) returned cudaError",  # a ROCm build names the hip* functions
            r"(cannot|can't) initialize (HIP|CUDA) without (the )?ATen_(hip|cuda) library",  # a build without that GPU
            r"Installing[^\n]*torch==[\w.]+\+cu\d+",  # a launcher replacing torch with a CUDA build
            r"CUDA driver version is insufficient",
            r"operator torchvision::\w+ does not exist",
            r"DeviceType::HIP INTERNAL ASSERT FAILED",
            r"lib(torch|c10)_(cuda|hip)\.so: cannot open shared object file",  # a package built for another torch
            r"compiled with different CUDA versions",  # torchvision's check: a torchvision of another build
            r"lib(cublas|cublasLt|cudnn|nvrtc|cufft|curand|cusparse)[\w.]*\.so[.\d]*: cannot open",
            r"(Error|Exception): Torch is not able to use GPU",  # raised (not the check's code, quoted in a log)
            r"has no attribute '_cuda_\w+'",  # torch._C of a build without GPU support
            r"Using CPU-only torch",  # SD.Next: no ROCm torch for this platform
            r"'ROCMExecutionProvider' is not in available provider",
            r"TryGetProviderInfo_CUDA",
            r"Torch not compiled with CUDA enabled",
            r"PyTorch CUDA is unavailable",  # tiny-cuda-nn's setup.py: a torch without a GPU backend
            r"No ROCm runtime is found",  # torch.utils.cpp_extension: ROCM_HOME exists, torch.version.hip is None
            r"Found no NVIDIA driver",
            r"The NVIDIA driver on your system is too old",  # a CUDA build's check (torch/cuda/__init__.py)
            r"Could not run 'torchvision::\w+' with arguments from the 'CUDA' backend",  # a CPU-only torchvision
            r"AppendExecutionProvider_ROCM",  # an ONNX Runtime built without its ROCm execution provider
            r"libcudart\.so[.\d]*: cannot open",
            r"failed call to cuInit",  # a CUDA build (TensorFlow's) calling NVIDIA's driver
            r"torch\.version\.hip\W+None",  # a printout of torch's build: no HIP
        ),
        "A CPU or CUDA build (of torch or a runtime) where a ROCm build is needed",
        "The installed wheel has no ROCm support (torch.version.hip is None), so it cannot use an AMD GPU. "
        "`pip install torch` from PyPI installs a CUDA build; inside a rocm/pytorch image it replaces the image's own.",
        (
            'python -c "import torch; print(torch.__version__, torch.version.hip)"',
            "In a rocm/pytorch container: start a fresh container from the image (never `pip install torch` in it; "
            "install other packages with a constraints file that pins its torch)",
            f"On bare metal: pip install torch torchvision --index-url {ROCM_WHEEL_INDEX}",
        ),
        ROCM_INSTALL,
    ),
    Rule(
        "gpu_memory_fault",  # before arch_not_supported, whose HSA_OVERRIDE_GFX_VERSION pattern would take it
        (
            r"Memory access fault by GPU[\s\S]*HSA_OVERRIDE_GFX_VERSION",  # (set on the command line it printed)
        ),
        "A GPU kernel accessed memory it may not (a GPU page fault), with HSA_OVERRIDE_GFX_VERSION set",
        "A kernel read or wrote outside its buffers. HSA_OVERRIDE_GFX_VERSION is set: the GPU runs code built for "
        "another gfx target, which can fault where the real target differs; or the kernel has a bug of its own.",
        (
            "Run again without HSA_OVERRIDE_GFX_VERSION (unofficial: a last resort for consumer GPUs missing from a "
            "build) on a build that lists the GPU, if one exists: torch.cuda.get_arch_list()",
            "AMD_SERIALIZE_KERNEL=3 python your_script.py   # synchronous launches: the traceback names its op",
        ),
        "https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/debugging.html",
    ),
    Rule(
        "arch_not_supported",
        (
            # (not "... not supported by Flash-Attention": an attention kernel that refuses the GPU, attention_kernel)
            r"gfx\w+[^\n]{0,30}(is )?not (supported|compatible)(?! (by|in) (flash|xformers|aotriton))",
            r"HSA_STATUS_ERROR_INVALID_ISA",
            r"Module not initialized",  # HIP (hip_global.cpp): no code object of the module loads on this GPU
            r"hipErrorNoBinaryForGpu",
            # torch's form of a code object for no GPU here (not inside rocBLAS: "rocBLAS error from hip error code:
            # 'hipErrorInvalidImage'" is blas_library, as its kernel files are the library's)
            r"(HIP|CUDA) error: (invalid kernel file|device kernel image is invalid)",
            r"could not find the CO for this GPU device",  # hip_fatbin.cpp: COMGR has no code object for this ISA
            r"hipErrorSharedObjectInitFailed: shared object initialization failed",  # rocThrust/rocPRIM's form
            r"rocBLAS warning: No paths matched \S*gfx",  # rocBLAS has no kernel files for this gfx target
            r"HIP is not supported on the specified GPU ARCH",  # hip_runtime.h's #error: HIP does not run on it
            r"Possible gpu arch mismatch",  # OpenMP offloading (libomptarget): no device image for this gfx target
            r"HCC RUNTIME ERROR: Fail to find compatible kernel",  # HCC-era programs: no kernel for this GPU
            r"minimum required AMDGPU ISA is gfx",  # TensorFlow's ROCm build ignores a GPU below its targets
            # hipErrorSharedObjectInitFailed as torch and ggml print it: a prebuilt code object the GPU cannot load
            # (not a framework's own JIT module: "hipModuleLoadData(...) failed with error: ...")
            r"(HIP|CUDA) error: shared object initialization failed",
            r"device object code was compiled for",  # HCC-era runtimes: "... compiled for a kaveri"
            r"No compatible code objects found",  # hip_fatbin.cpp: the binary has no code object for this gfx target
            r"No device code available for function",  # the same, from HIP's HCC-era runtime
            r"failure 'invalid kernel file'",  # RCCL (NCCL WARN Cuda failure): its kernels lack this gfx target
            r"error: no kernel image is available",  # hipErrorNoBinaryForGpu's text (and CUDA's)
            r"invalid device function",
            r"hipErrorInvalidDeviceFunction",
            r"HSA_OVERRIDE_GFX_VERSION",
            r"in \?\? \(\) from \S*libamdhip64\.so",  # gdb: a crash inside the HIP runtime
        ),
        "The torch build has no GPU code for this GPU's architecture (gfx target)",
        "Kernels are compiled per gfx target; this GPU's target is not in the build "
        "(or HSA_OVERRIDE_GFX_VERSION points at the wrong one).",
        (
            'python -c "import torch; print(torch.cuda.get_arch_list())"  # targets in the build',
            "rocminfo | grep -m1 -o 'gfx[0-9a-f]*'  # the GPU's target",
            "Install a build that lists the target; for your own extensions set PYTORCH_ROCM_ARCH=<gfx target>",
            "AMD's multi-arch wheels take the GPU's kernels from an extra: pip install \"torch[device-gfxNNNN]\" "
            f'"torchvision[device-gfxNNNN]" --index-url {AMD_WHEEL_INDEX} (NNNN from rocminfo)',
            "HSA_OVERRIDE_GFX_VERSION (e.g. 11.0.0) only as a last resort on consumer GPUs; unset it on Instinct GPUs",
        ),
        ROCM_GPUS,
    ),
    Rule(
        "device_permissions",
        (
            r"amdgpu_get_auth",
            # (not a queue's asynchronous error while kernels run: "callbackQueue aborting with error")
            r"(?<!aborting with error : )HSA_STATUS_ERROR_OUT_OF_RESOURCES",
            r"No HIP GPUs are available",
            # torch.utils.collect_env of a ROCm build that sees no GPU
            r"ROCM used to build PyTorch: \d[\s\S]{0,800}?Is CUDA available: False",
            r"No CUDA GPUs are available",  # from a ROCm build too (c10/hip/HIPFunctions.cpp); see wrong_wheel
            r"Unable to open /dev/kfd",
            r"/dev/(kfd|dri)\S*.*(Permission denied|No such file)",
            r"hipErrorNoDevice",
            r"OpenCL Error -1001",  # CL_PLATFORM_NOT_FOUND_KHR: the OpenCL loader finds no GPU runtime
            r"no ROCm-capable device is detected",
            r"Initializing the hsa runtime failed",
            r"hipErrorInvalidDevice\b",  # a device ordinal the runtime does not have (not ...DeviceFunction)
            r"ROCk module is NOT loaded",  # rocminfo: the amdgpu kernel driver is not loaded
            r"GPU node has an unrecognized id",  # rocminfo: the runtime does not know this GPU
            r"/sys/class/kfd/kfd/topology/nodes' does not exist",  # the ROCm runtime finds no amdgpu (KFD) driver
            r"Could not find any ROCm devices on this host",  # Apptainer/Singularity --rocm
            r"Failed to get device count",  # the HIP runtime at import: no usable GPU
            r"could not select device driver",  # docker --gpus / compose `driver:`: AMD GPUs are passed as devices
            r"No AMD GPUs (specified|detected)",  # rocm-smi, and the ROCm wheels' GPU detection, see none
            r"missing the following required groups",  # amd-smi: the user is not in render and video
        ),
        "The ROCm runtime sees no usable GPU",
        "/dev/kfd or /dev/dri is not passed into the container, the user is not in the render/video groups, "
        "or the GPU is not supported by this ROCm.",
        (
            "ls -l /dev/kfd /dev/dri; id   # devices present? user in render and video?",
            f"docker run {DOCKER_GPU_FLAGS} ...",
            "sudo usermod -aG render,video $USER   # then log in again",
            "python -m helpers.doctor",
        ),
        ROCM_DOCKER,
    ),
    Rule(
        "unknown",  # a GPU hang: page faults that follow the reset are its consequence, not its cause
        (r"amdgpu_job_timedout",),
        "The GPU hung and the kernel driver reset it",
        "A job on the GPU ran past the driver's timeout (amdgpu_job_timedout), so the driver reset the GPU. The cause "
        "is not in this log: a driver or firmware bug, an overloaded or overheating GPU, or a kernel that never ends. "
        "Memory faults logged after the reset follow from it.",
        (
            "sudo dmesg | grep -i -B5 -A20 amdgpu_job_timedout   # which process and ring hung, and what came before",
            "Update the kernel's amdgpu driver and the GPU firmware (linux-firmware); then try again",
            "amd-smi monitor (or rocm-smi): temperature and power while it runs",
        ),
        "https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/debugging.html",
    ),
    Rule(
        "gpu_memory_fault",
        (
            r"illegal memory access",
            r"Memory access fault by GPU",
            r"MEMORY_APERTURE_VIOLATION",
            r"HSA_STATUS_ERROR_MEMORY_FAULT",
            r"GPU core dump created",
            r"Error Code \(0x(29|2b)\)",  # HSA status 41/43: memory aperture violation / memory fault (hsa_ext_amd.h)
            # the kernel log (dmesg) of a GPU page fault
            r"amdgpu: \[\w+\] (no-retry )?page fault|VM_L2_PROTECTION_FAULT",  # (also GCVM_L2_...)
        ),
        "A GPU kernel accessed memory it may not (a GPU page fault)",
        "A kernel read or wrote outside its buffers: an index out of range, a kernel built for another GPU (for "
        "instance "
        "through HSA_OVERRIDE_GFX_VERSION), or a library bug. ROCm reports it as a memory access fault and aborts.",
        (
            "AMD_SERIALIZE_KERNEL=3 python your_script.py   # synchronous launches: the traceback names the kernel's "
            "op",
            "Unset HSA_OVERRIDE_GFX_VERSION if it is set: code for another gfx target can fault",
            "Run the failing step on the CPU: an out-of-range index raises a readable IndexError there",
        ),
        "https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/debugging.html",
    ),
    Rule(
        "blas_library",
        (
            r"HIPBLAS_STATUS_\w+",
            r"hipBLASLt (error|on an? unsupported architecture)",
            r"rocBLAS error",
            r"rocBLAS call failed|rocblas_invoke",  # MIGraphX and others: a rocBLAS call returned a status
            r"Expected iter != ops_\.end\(\)",  # TunableOp: the selected GEMM solution is not in this rocBLAS/hipBLASLt
            r"rocblas_status_\w+",
            r"CUBLAS_STATUS_(?!NOT_SUPPORTED[^\n]*_16BF\b)\w+",  # (a bf16 GEMM not supported: dtype_unsupported)
            r"Tensile(Library|_lazy| host| solution)",
            r"Tensile::\w",  # a backtrace frame inside rocBLAS's kernel library
            r"in function \w*cublas\w* at ",  # ggml's report of a failed cuBLAS call (ZLUDA: rocBLAS does it)
            r"Error location: [^\n]*\bgemm\w*\(\)",  # darknet's failed GEMM (cuBLAS; rocBLAS through ZLUDA)
            r"hipBLASLt[/\\]tensilelite",  # hipBLASLt's kernel library (TensileLite) failed
            r"\brocBLAS \w*gemm\b[^\n]*\berr\b",  # a test of rocBLAS's GEMM reporting its error
            r"Error loading msgpack data",  # a hipBLASLt/Tensile kernel file from another release of the library
            r"(hipblaslt|rocblas)[/\\]library[/\\]\S+\.(hsaco|co|dat)\b",  # a kernel file of the library's own
        ),
        "rocBLAS or hipBLASLt (ROCm's cuBLAS) failed",
        "The GEMM libraries load kernel files per GPU target (Tensile) and pick a kernel per shape and dtype. Files "
        "missing "
        "for this gfx target, a GPU that hipBLASLt does not support, or a shape without a solution stop the matmul.",
        (
            "torch.backends.cuda.preferred_blas_library('cublas')   # rocBLAS instead of hipBLASLt (lesson 07)",
            "Does the wheel support this GPU? torch.cuda.get_arch_list() must list the gfx target of "
            "torch.cuda.get_device_properties(0).gcnArchName (the part before ':', gfx90a of gfx90a:sramecc+:xnack-)",
            "TensileLibrary files missing: reinstall torch for this ROCm version; never mix /opt/rocm libraries into "
            "it",
        ),
        "https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/",
    ),
    Rule(
        "nvidia_only_check",
        (
            r"which is of cuda capability",
            # TorchServe counted GPUs with nvidia-smi only until its ROCm support (pytorch/serve PR #3371)
            r"org\.pytorch\.serve\.ModelServer[\s\S]{0,600}Number of GPUs: 0",
            r"(only|not) supported on SM\d+",
            r"Your setup doesn't support bf16",
            r"(bf16|bfloat16)\W.{0,80}(not available|doesn't support|not supported on|requires? (an )?Ampere|compute "
            r"capability)",
            r"only supported on GPUs with compute capability",
            r"op_builder[/\\]\w+\.py\", line \d+, in is_compatible",  # DeepSpeed's op checks (CUDA version, capability)
            r"No NVIDIA GPU (detected|found)",  # an installer or launcher that looks for NVIDIA's GPUs only
        ),
        "A library's capability check only knows NVIDIA GPUs",
        "Some frameworks decide bf16 or fused-kernel support with NVIDIA-only rules (compute capability >= 8.0, "
        "'Ampere'). On AMD GPUs those rules say no even where the GPU has the feature (MI200 and MI300 run bf16).",
        (
            "See what this GPU really runs: helpers.precision.probe_dtypes(device) (lesson 02)",
            "Upgrade the library (current releases of most check ROCm too), or pass the dtype explicitly",
            "Where it insists: float16 with a GradScaler, or float32",
        ),
        "https://pytorch.org/docs/stable/amp.html",
    ),
    Rule(
        "out_of_memory",
        (r"out[ -]of[ -]memory", r"OutOfMemoryError", r"hipErrorOutOfMemory"),
        "The GPU ran out of memory",
        "The model, activations and optimizer state do not fit in free device memory at this batch size.",
        (
            "Reduce the batch size; use bf16 autocast (lesson 02) or activation checkpointing",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # fragmentation (read on ROCm too)",
            "amd-smi monitor (or rocm-smi): is another process holding memory?",
            "torch.cuda.empty_cache() only between phases, not inside the training loop",
        ),
        "https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
    ),
    Rule(
        "distributed_backend",
        (
            r"TCPStore",
            r"RendezvousError|rendezvous",
            r"NCCL failure",
            r"Invalid backend",
            r"Unknown (c10d )?backend type",  # older torch: 'Unknown c10d backend type RCCL'
            r"HCCL",
            r"NCCL (error|WARN)",
            r"ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclInvalidUsage",
            r"\d[ \t]+nccl[A-Z]\w*[ \t]*(\n|$)",  # a native backtrace (Paddle's) stopped in an NCCL/RCCL call
            # not a name in a native backtrace: mangled (ProcessGroupNCCL8WorkNCCL) or not (c10d::ProcessGroupNCCL::...)
            r"(?<!::)ProcessGroupNCCL(?!\d)",
            # ProcessGroupNCCL's watchdog (RCCL on ROCm): a collective that timed out, or a GPU error it caught
            r"Watchdog caught collective operation timeout|Process group watchdog thread terminated with exception",
            r"CUDA-aware MPI",
            r"DistBackendError",
        ),
        "A torch.distributed backend error (NCCL, which is RCCL on ROCm)",
        'On ROCm the backend is still called "nccl" and is RCCL; there is no "rccl" backend, and HCCL is '
        "Huawei Ascend's library. RCCL reads the NCCL_* variables.",
        (
            'dist.init_process_group(backend="nccl")   # RCCL on ROCm; "gloo" on CPU',
            "NCCL_DEBUG=INFO torchrun ...   # RCCL logs its transport and topology",
            "NCCL_SOCKET_IFNAME=<interface> for multi-node; TORCH_NCCL_ASYNC_ERROR_HANDLING=1 to fail instead of hang",
        ),
        "https://pytorch.org/docs/stable/distributed.html",
    ),
    Rule(
        "unknown",  # before dtype_unsupported: a framework's warning that it falls back, with no error after it
        (r"WARNING\b[^\n]*?(unsupported|not support)[^\n]{0,40}(bfloat16|float16|fp8)(?![\s\S]*error)",),
        "A warning that the device lacks a dtype, and no error after it",
        "The framework warned that this GPU does not support the dtype and fell back (to float16 or float32, or to "
        "another engine). A warning stops nothing by itself: if the run goes wrong later, the cause is in what it "
        "printed then.",
        (
            "Check what this GPU runs: helpers.precision.probe_dtypes(device) (lesson 02); MI200 and MI300 run bf16",
            "Search the framework's issue tracker for the warning line, with your GPU's gfx target",
        ),
        "https://rocm.docs.amd.com/en/latest/reference/precision-support.html",
    ),
    Rule(
        "dtype_unsupported",
        (
            r"Unsupported conversion from 'f8",
            r"Feature '[\w.]*bf16[\w.]*' requires \.target sm_\d+",  # ptxas: no bf16 before sm_80 (NVIDIA)
            r"not implemented for '(BFloat16|Half|Float8\w*)'",
            r"BLAS_STATUS_NOT_SUPPORTED[^\n]*_16BF\b",  # a bf16 GEMM (CUDA_R_16BF) this GPU's BLAS does not run
            r"float8_e4m3fn\b",
            # HIP's bfloat16 types lack a conversion the code (often generated) uses: a compile error on this dtype
            r"no matching conversion for C-style cast from '\w+' to '(hip_bfloat16|__hip_bfloat16|__bf16)'",
            r"e4m3fnuz|e5m2fnuz",
            r"(unsupported|not support(ed)?).{0,40}(bfloat16|float16|half|fp8|float8)",
            r"(bfloat16|float16|fp8|float8).{0,40}(unsupported|not supported)",
        ),
        "This dtype is not supported for this op on this device",
        "Not every op has a bfloat16/float16/fp8 kernel on every device. fp8: MI300 (gfx942) implements the "
        "FNUZ variants (float8_e4m3fnuz), not the OCP float8_e4m3fn that NVIDIA Hopper uses.",
        (
            "Probe what runs: helpers.precision.probe_dtypes(device) (lesson 02)",
            "Use autocast instead of casting the model; fall back to float32 on the CPU",
            "fp8 on MI300: torch.float8_e4m3fnuz / torch.float8_e5m2fnuz",
        ),
        "https://rocm.docs.amd.com/en/latest/reference/precision-support.html",
    ),
    Rule(
        "miopen",
        (
            r"MIOpen\(HIP\): Error",
            r"MIOpen Error",
            r"boost::filesystem::\w+: [^\n]*miopen",  # MIOpen's user database directory (~/.config/miopen)
        ),
        "MIOpen (ROCm's cuDNN) failed",
        "MIOpen reported an error of its own: a kernel it could not compile (hipRTC), a find or performance database "
        "it "
        "could not read or write, or no algorithm for this convolution.",
        (
            "MIOPEN_LOG_LEVEL=5 python your_script.py   # what MIOpen tried, per convolution",
            "export MIOPEN_USER_DB_PATH=/tmp/miopen-$USER MIOPEN_CUSTOM_CACHE_DIR=/tmp/miopen-cache-$USER   # "
            "writable caches",
            "export MIOPEN_FIND_MODE=FAST, or torch.backends.cudnn.enabled = False to rule MIOpen out",
        ),
        "https://rocm.docs.amd.com/projects/MIOpen/en/latest/how-to/debug-log.html",
    ),
    Rule(
        "triton_rocm",
        (
            r"triton\.(compiler|runtime)\.errors\.\w+",
            r"PassManager::run failed",
            r"TritonGPU to LLVM",
            r"failed to legalize operation 'tt\.",
            r"__triton_launcher",
            r"amd_triton_kernel",  # the temporary files of Triton's AMD backend (.hsaco code objects)
            r"InductorError",
            r"LoweringException",  # Inductor's, around a Triton error (a Triton of another release than torch's)
            r"No module named 'triton\._C",  # Triton's compiled core: another Triton release, or a broken install
            r"/tmp/\w+/main\.c:\d+:\d+: fatal error",
            r"TRITON_HIP_LLD_PATH",
            r"Triton Error \[HIP\]",
            r"unsupported target: 'gfx",
            r"Triton PTX codegen error",
            r"OutOfResources: out of resource",
            r"cannot be accessed from Triton",
            r"function load_binary> returned NULL",  # Triton's driver could not load the kernel it compiled
            r"Triton compilation failed",  # Inductor's log line
            r"_worker_compile_triton",  # Inductor's compile worker
            r"TritonTemplateCaller",  # an autotuning choice of Inductor's Triton templates
            r"Triton kernel test failed",
            r"triton[\\/](backends[\\/]amd|windows_utils)",  # Triton's AMD backend (hip_utils.c, MSVC on Windows)
            r"mlir_reproducer",  # a Triton compiler pass failed and dumped its input
        ),
        "Triton (torch.compile's kernels) failed on this GPU",
        "Triton compiles kernels at run time (torch.compile, vLLM, custom kernels). Its AMD backend has other limits "
        "than "
        "NVIDIA's: less on-chip memory per compute unit (64 KiB of LDS on MI300X, up to 228 KiB of shared memory per "
        "SM "
        "on an H100), other gfx targets, and kernels that get CPU tensors fail.",
        (
            "Out of shared memory: smaller BLOCK sizes or num_stages for this kernel",
            "Use the Triton that ships with your torch (pytorch-triton-rocm), not a CUDA-only triton wheel",
            "torch.compile(model, backend='eager') to check that the model itself is fine",
        ),
        "https://triton-lang.org/main/index.html",
    ),
    Rule(
        "attention_kernel",
        (
            r"(flash|mem(ory)?[ _]efficient|sdpa|fmha|aotriton|ck_tile)\w*.{0,60}(not supported"
            r"|unsupported|only supports|not compiled)",
            r"for fmha_\w+",
            r"attention on Current AMD GPU is still",  # "experimental" may be on the next line
            r"Attention\w*<.*> does not support this problem",
            r"Flash Attention failed",
            r"(not supported|invalid) (by|in|for) (flash[-_ ]?attn|flash[-_ ]?attention|xformers|aotriton)\b",
            r"(Memory efficient|Flash attention|cuDNN attention) kernel not used because",
            r"No available kernel\. +Aborting execution",  # torch 2.0 printed two spaces
            r"No viable backend for scaled_dot_product_attention",
            r"Torch was not compiled with (flash|memory efficient) attention",
            r"(FlashAttention|CK)( forward| backward)? only supports head dimension at most",
            r"No operator found for `memory_efficient_attention_(forward|backward)`",
            r"xFormers wasn't build with CUDA support",
            r"operator wasn't built - see python -m xformers\.info",  # xformers lists why each kernel refused
        ),
        "An attention kernel refused this GPU, dtype or shape",
        "Fused attention kernels (flash-attn, xformers, SDPA's flash and memory-efficient backends) exist only for "
        "some GPU architectures, dtypes (fp16/bf16) and head sizes. On ROCm, PyTorch's come from AOTriton, built "
        "for a list of gfx targets; flash-attn and xformers need their ROCm builds.",
        (
            "Call torch.nn.functional.scaled_dot_product_attention without forcing a backend: it picks one that runs "
            "here, down to the math kernel (lesson 08)",
            "Check q, k, v: (B, H, S, D) for SDPA, one dtype (fp16/bf16 for the fused kernels), head dim <= 256",
            "GPUs PyTorch marks experimental (torch 2.14: gfx1101, gfx1102, gfx1150, gfx1151, gfx1200): "
            "export TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1",
        ),
        "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html",
    ),
    Rule(
        "missing_extension",
        (
            # a package's extension "not installed" in an error, not in a start-up log's list of what is missing
            # (">> xformers not installed")
            r"(error|exception)[^\n]{0,120}(flash_attn|xformers|apex|bitsandbytes|deepspeed|mamba_ssm|causal_conv1d"
            r"|vllm)\W[^\n]{0,80}not installed",
            r"No module named '[\w.]*(_cuda|_C|_ext|cuda_\w+)'",
            r"Could not run 'torchaudio::\w+' with arguments from the 'CUDA' backend",  # torchaudio without its GPU ops
            r"xFormers can't load C\+\+/CUDA extensions",
            r"Need to compile C\+\+ extensions to use all xFormers features",  # xFormers without its built ops
            r"Failed to import from [\w.]+ with",  # vLLM and SGLang: a compiled module of theirs did not load
            r"module '\w+' has no attribute '\w+_cuda'",  # an extension built without its CUDA kernels
            r"/_C(\.abi3)?[\w.-]*\.so: undefined symbol",  # a package's extension built against another torch
            r"(?<![\w.-])(?!lib)\w+\.so: cannot open shared object file",  # a package's own module (not a lib*.so)
            r"_C_cutlass",
            r"libamd_smi\.so",
            r"CUDA SETUP: Setup Failed",
            r"is not compatible with ROCM",
            r"name '(amdsmi|sageattn\w*|flash_attn\w*)' is not defined",  # an optional import that failed earlier
            r"amdsmi does not seem to be installed",
            r"bitsandbytes (ROCm binary|native library)",
            r"Configured ROCm binary not found",
            # also wrapped by a logger, the next line behind a prefix of up to 3 words ([rank0]:, a time stamp)
            r"No module\s+(\S+\s+){0,3}?named\s+'(apex|bitsandbytes|flash_attn|xformers|cupy|pycuda|tensorrt|triton)",
            r"requires cuda extensions",
            r"modules not available\b",
            r"undefined symbol: .*cuda",
            r"(CUDA|ROCm) Setup failed despite",
            r"libbitsandbytes_\w+\.so",
            r"bitsandbytes was compiled without GPU support",
            r"NVML Shared Library Not Found",
        ),
        "A CUDA-only extension or kernel is missing on this machine",
        "The package or kernel was built for NVIDIA GPUs only (or for other GPU targets).",
        (
            "PyTorch's own equivalent: F.scaled_dot_product_attention (flash-attn, xformers), torch.amp (apex.amp), "
            "torch.optim.AdamW(fused=True) (FusedAdam), nn.LayerNorm/nn.RMSNorm; amdsmi for pynvml (lesson 08)",
            "or the ROCm build of the package (flash-attention, bitsandbytes >= 0.49, xformers, ROCm/apex)",
            "Rebuild your own .cu extensions with torch.utils.cpp_extension: it hipifies them on ROCm (lesson 05)",
        ),
        "https://pytorch.org/docs/stable/cpp_extension.html",
    ),
    Rule(
        "numpy_compat",
        (
            r"compiled without NumPy support",
            r"numpy\.core\.multiarray failed to import",
            r"compiled using NumPy 1\.x cannot be run in",  # "NumPy 2" may follow on the next line
            r"cannot import name '\w+' from 'numpy[\w.]*'",  # a name NumPy 2 moved or removed
        ),
        "NumPy and torch disagree",
        "torch, or a package beside it, was built or written for another NumPy release than the one installed (1.x "
        "against 2.x: NumPy 2 moved or removed names), or torch was built without NumPy.",
        (
            "pip install 'numpy<2' where torch or a package was built or written for NumPy 1.x (or upgrade them to "
            "releases for NumPy 2)",
            "Inside a rocm/pytorch image: use the image's python and its numpy; do not reinstall numpy over it",
        ),
        "https://numpy.org/devdocs/numpy_2_0_migration_guide.html",
    ),
    Rule(
        "unknown",  # not a ROCm problem, but said plainly rather than taken for a failed port (next rule)
        (
            r"/nvidia_detail/\S+\.(cpp|cu)\b",  # a hip* library's NVIDIA backend
            r"__HIP_PLATFORM_SPIRV__",  # HIP on SPIR-V (chipStar: Intel GPUs and others)
            r"'amp\.h' file not found",  # C++ AMP, the other language of HCC (ROCm's old compiler), not HIP
        ),
        "A build for another platform than ROCm (NVIDIA, SPIR-V) or in another language than HIP",
        "HIP code also builds for NVIDIA GPUs (the hip* libraries' nvidia_detail sources, with the CUDA toolkit) and "
        "for SPIR-V (chipStar), and HCC once compiled C++ AMP. This error comes from such a build: it is no port of "
        "CUDA code to ROCm.",
        (
            "For an AMD GPU: install the library from ROCm's packages, or build it with HIP_PLATFORM=amd",
            "Otherwise: search that project's issue tracker for the error line",
        ),
        "https://rocm.docs.amd.com/projects/HIP/en/latest/install/build.html",
    ),
    Rule(
        "unknown",  # not a port either: ROCm's own compiler tools built against another LLVM
        (
            r"is not a member of ['\u2018]llvm::",
            r"/(ockl|ocml)/src/\S+\.cl:\d+:\d+: error:",  # the device libraries' own sources: another clang
        ),
        "A ROCm component built against another LLVM release",
        "ROCm's compiler pieces (comgr, the device libraries, hipcc's clang) are built against the LLVM of the same "
        "ROCm release; with another LLVM, its API no longer matches. This is no error in the code being ported.",
        (
            "Install the ROCm release's packages instead of building its compiler tools from source",
            "From source: build them with the llvm-project of the same ROCm release (ROCm's own branch)",
        ),
        "https://rocm.docs.amd.com/projects/llvm-project/en/latest/",
    ),
    Rule(
        "unknown",  # not a port either: building HCC, ROCm's compiler before HIP-Clang, from its sources
        (
            r"[/\\]hcc[/\\]build[/\\]compiler[/\\]",
            r"CMakeFiles[/\\]hipify-clang\.dir[/\\]",  # building the HIPIFY tool itself
            r"in namespace 'Kalmar'",  # HCC's runtime namespace: building HIP's HCC-era runtime against another HCC
            r"Built target link_libhsa-runtime64\.so",  # building ROCR, the HSA runtime, itself
        ),
        "Building one of ROCm's own compilers or runtimes (HCC, HIP, the HSA runtime, hipify-clang) failed",
        "This error comes from building the tool itself, not from the code being ported. (HCC was ROCm's C++ compiler "
        "until HIP-Clang replaced it in ROCm 3.5; its sources are archived.)",
        (
            "Install the tool from ROCm's packages (hipcc, hipify-clang) instead of building it",
            "From source: build a release tag against the LLVM it names; search that project's issue tracker for the "
            "error line",
        ),
        "https://rocm.docs.amd.com/projects/HIP/en/latest/",
    ),
    Rule(
        "unknown",  # not a port: the project's CPU library (libggml-cpu.so) misses its own symbols at link time
        (r"lib[\w+]*[-_]cpu\.so[\w.]*: undefined reference to",),
        "A CPU library of the project failed to link",
        "The linker found symbols missing in the project's CPU library (lib...-cpu.so): code for the CPU that was not "
        "compiled in (a CPU feature switch, a stale build folder). Nothing in it is GPU code being ported.",
        (
            "Build again from an empty build folder, with the CPU options the project documents",
            "Then search that project's issue tracker for the first undefined reference",
        ),
        "https://gcc.gnu.org/onlinedocs/gcc/Link-Options.html",
    ),
    Rule(
        "unknown",  # not a port: a warning in plain C code that the build's -Werror turns into an error
        (r"\.c:\d+:\d+: error: [^\n]*\[-Werror=",),
        "A compiler warning in C code stopped the build (-Werror)",
        "A newer GCC warns about code that an older one accepted, and the build treats warnings as errors. The code "
        "is plain C, not GPU code being ported.",
        (
            "Build with the compiler version the project supports, or add -Wno-error=<the warning> to CFLAGS",
            "Then search that project's issue tracker for the warning",
        ),
        "https://gcc.gnu.org/onlinedocs/gcc/Warning-Options.html",
    ),
    Rule(
        "unknown",  # not a port: the build misses a header of a library that has nothing to do with GPUs
        (
            r"fatal error: (?![\w/.+-]*?(?<![a-z])(cuda|cu[a-z]+|hip|roc|nv|torch|aten|c10|thrust|cub|miopen|rccl|nccl"
            r"|cutlass|ck)[\w/.+-]*: )[\w/.+-]+\.(h|hpp|hh): No such file or directory",
        ),
        "A header of a library other than CUDA, HIP or torch is missing",
        "The build cannot find a header of a host library (not CUDA, HIP, ROCm or torch): that library's "
        "development files are not installed, or another version than the project expects is.",
        (
            "Install the development package of the library the header belongs to (its -dev/-devel package), in "
            "the version the project pins",
            "Then search that project's issue tracker for the error line",
        ),
        "https://gcc.gnu.org/onlinedocs/cpp/Search-Path.html",
    ),
    Rule(
        "extension_build",
        (
            r"ninja: build stopped",
            r"Error compiling objects for extension|_run_ninja_build|Command '\['ninja', '-v'\]' returned non-zero",
            r"(hipcc|clang(-\d+)?|hip-clang): error:",
            r"\.\w+(\.\w+)?:\d+:\d+: (fatal )?error:",  # file.cu:12:5: error: (also when hipcc reads a library)
            # file.cu(12): error: (nvcc), file.cpp(12,5): error: (clang-cl), error C2065: (MSVC), error G30...: (hipcc)
            r"\.\w+(\.\w+)?\(\d+(,\d+)?\):\s*(fatal )?error( [A-Z]\w*)?:",  # (nvcc-style: error: on the next line)
            # CMake did not find a ROCm package
            r'(By not providing "Find|configuration file provided by ")'
            r"(hsa-runtime64|hip\w*|roc\w*|miopen|rccl|amd_comgr)\b",
            r"No GPU arch specified for ROCm build",  # PyTorch's LoadHIP.cmake: PYTORCH_ROCM_ARCH unset
            r"HIP_ARCHITECTURES is empty",  # CMake's HIP language: no GPU target given for a HIP target
            r"FindHIP\.cmake:\d+ \(message\)",  # CMake's FindHIP module could not find or use HIP
            r"error: unknown argument: '-",  # hipcc passed clang a flag this clang no longer knows
            r"unknown HIP_PLATFORM",  # a Makefile that knows only the old hcc/nvcc platforms, not HIP-Clang's
            # CMake: a ROCm library variable not found (ROCM_ROCTX_LIB, ...), listed under this line
            r"set to NOTFOUND\.[\s\S]{0,300}?\b(ROCM|HIP|ROCTX|MIOPEN|RCCL|ROCBLAS|HIPBLAS)\w*",
            # CMake cannot find a source file that hipify was to write (hipify's summary came first)
            r"Total number of replaced kernel launches[\s\S]{0,900}?Cannot find source file",
            r"FAILED: \S*(hip|rocm|cuda|\.cu\b)\S*\.(o|obj|so)\b",  # ninja: a GPU object or library that did not build
            r"no (known conversion from|matching function for call to) ['\u2018]",  # a C++ type error in GPU code
            r'instantiation of (class |function )?"[^"\n]+" at line \d+',  # nvcc's context of a template's error
            r"Can't exec \"[^\"]*/bin/(hcc|clang|nvcc)",  # hipcc (a Perl script in old ROCm) cannot run its compiler
            r"error: unknown warning option",
            r"error: command '[^']*(hipcc|nvcc|clang\+\+|g\+\+|c\+\+)' failed",
            r"Failed building wheel for|Failed to build installable wheels",
            r"FileNotFoundError: .*\.(cpp|cu|cuh|h)'",
            r"linker command failed",
            r"ld: cannot find -l(amdhip64|hip\w*|roc\w*|MIOpen|rccl|hsa-runtime64|amd_comgr)\b",  # a ROCm library
            r"multiple definition of [`'\u2018]",  # a link error: the same symbol in a .cpp and its hipified copy
            r"missing and no known rule to make it",  # ninja: a file the build needs (a ROCm library) is missing
            r"@local_config_rocm|rocm_configure\.bzl",  # Bazel (XLA, TensorFlow): configuring the ROCm build failed
            r"error in backend",
            r"clang frontend command failed",
            r"Error generating file",
            r"fatal error: '?[^'\s]+'? file not found",
            r"fatal error: [\w/.]+\.(h|hpp|cuh): No such file or directory",
            r"unknown type name 'cu\w+'",
            r"The mask must be a 64-bit",
            r"<inline asm>",
            r"cannot find HIP runtime",
            r"does not contain the HIP runtime CMake package",  # CMake's HIP language: ROCm's hip-lang is missing
            r"Failed to find ROCm root directory",  # the same, from CMake's HIP compiler detection
            r"was built using hcc",  # HCC-era hipcc: HIP and the compiler are from different releases
            r"nvcc was not found",
            r"bin/hipcc: ",  # the shell cannot run hipcc (not installed there), in any language
            # torch.utils.cpp_extension's _join_cuda_home, and _join_rocm_home's twin text where it found no ROCm
            r"CUDA_HOME|ROCM_HOME environment variable is not set",
            r"nvcc(: not found| not found|: command not found)",
            r"errors? generated when compiling for",
            r"warning: \S+\.(cu|cuh):#\d+ : ",  # hipify-perl: CUDA code it could not translate
            r"hipify[^\n]*(error|fail)|(error|fail)[^\n]*hipify",  # hipify named on a line that reports a failure
            r"hipify_python\.py\", line \d+[\s\S]{0,800}?\n\s*\w*(Error|Exception)\b",  # an exception raised in hipify
        ),
        "Building CUDA code for ROCm failed",
        "The code or its build script assumes the CUDA toolkit: CUDA headers and types, nvcc and CUDA_HOME, 32-bit "
        "warp "
        "masks, PTX inline assembly, or instructions the target GPU lacks. On ROCm, hipcc compiles hipified sources "
        "against ROCm's headers.",
        (
            "Build with torch.utils.cpp_extension from a ROCm torch: it hipifies .cu files and uses ROCM_HOME and "
            "hipcc "
            "(lesson 05)",
            "python -m helpers.portcheck csrc/   # the warp-32 masks, PTX and CUDA-only libraries it will trip on",
            "Set PYTORCH_ROCM_ARCH to your GPU's target (rocminfo | grep gfx); include <hip/hip_runtime.h>, not "
            "cuda_runtime.h",
            'ROCm from pip (no /opt/rocm): pip install "rocm[devel]" && rocm-sdk init && export ROCM_HOME=$(rocm-sdk '
            "path --root): headers such as hipblas/hipblas.h and the compilers are in rocm[devel] (pytorch#196503)",
        ),
        "https://rocm.docs.amd.com/projects/HIPIFY/en/latest/",
    ),
    Rule(
        "device_mismatch",
        (
            r"Expected all tensors to be on the same device",
            r"Attempting to deserialize object on (a )?CUDA device",
            r"Input type \(.*\) and weight type \(.*\) should be the same",
            r"Expected (object of )?device type",
            r"is not on the expected device",
            r"Placeholder storage has not been allocated on MPS device",
            r"is on \S+ but expected (it )?(to be )?on",
            r"invalid device ordinal",  # cuda:N (or a checkpoint's device) beyond the GPUs this machine shows
        ),
        "Tensors (or a checkpoint) on different devices",
        "Part of the computation is on the GPU and part on the CPU, or a checkpoint saved on a GPU is loaded "
        'where that GPU does not exist ("invalid device ordinal": cuda:N for an N this machine does not have). '
        "On ROCm the GPU still prints as cuda:N.",
        (
            "Move the model and every input with .to(device); create tensors with device=device",
            "torch.load(path, map_location=device)",
        ),
        "https://pytorch.org/docs/stable/generated/torch.load.html",
    ),
    Rule(
        "miopen_kdb",
        (
            r"Unable to read system database file",
            r"Missing system database file",
        ),
        "MIOpen's precompiled kernel database for this GPU target is not installed",
        "MIOpen ships a kernel database (.kdb) per GPU target in a separate package. Without it, MIOpen compiles the "
        "kernels it needs at first use: the first run of each shape is slower, results are the same.",
        (
            "apt-get install miopen-hip-<target>kdb   # e.g. miopen-hip-gfx942kdb for MI300X (rocminfo | grep gfx)",
            "or ignore it: only start-up time is affected, and the compiled kernels are cached in ~/.cache/miopen",
        ),
        "https://rocm.docs.amd.com/projects/MIOpen/en/latest/install/install.html",
    ),
    Rule(
        "shared_lib_load",  # a symptom, not a cause: only when no rule above explains the crash
        (r"(exit|return)\w*( with)? code[^\n]{0,20}(3221225477|-1073741819|0xC0000005)",),  # the process's exit code
        "A native library crashed the process (Windows access violation)",
        "Exit code 0xC0000005 (3221225477) is an access violation in native code. With nothing else in the log it is "
        "most often a DLL from another ROCm/HIP SDK or driver release than the torch wheel was built for.",
        (
            "Install the ROCm torch wheels that match the installed AMD driver / HIP SDK, in a fresh environment",
            "Run again with python -X faulthandler to see the Python frame that was running when it crashed",
        ),
        ROCM_INSTALL,
    ),
    Rule(
        "miopen",
        (
            r"MIOpen(\((HIP|OpenCL)\))?: (Warning|Error)",  # MIOpen's own log lines (its OpenCL backend's too)
            r"MIOpen\(HIP\)(\s+[\d.]+)?: (Info2?|Warning|Error|Command) \[",  # its log (MIOPEN_LOG_LEVEL), timed or not
            r"SQLite prepare error|Internal error while accessing SQLite database",  # MIOpen's databases are SQLite
            r"miopen::Exception",
            r"miopenStatus\w+",
            r"MIOpen/src/\S+\.cpp:\d+",  # a log line that names MIOpen's source file
            # MIOpenDriver's verification of an op against the CPU
            r"(Forward|Backwards?)( prop)? (Convolution|GEMM|batch ?norm) (Data |Weights |verification )?Failed",
            r"F\.conv[123]d\([\s\S]{0,500}HIP error: unspecified launch failure",  # a MIOpen kernel failed
        ),
        "MIOpen (ROCm's cuDNN) failed or is slow",
        "MIOpen searches convolution kernels per shape and caches them; a search can be slow, a cache "
        "directory unwritable, or a kernel missing for this target.",
        (
            "export MIOPEN_FIND_MODE=FAST   # skip the long first-run search",
            "export MIOPEN_USER_DB_PATH=/tmp/miopen-$USER   # a writable cache directory",
            "torch.backends.cudnn.benchmark = False (the default): True triggers exhaustive searches per shape",
        ),
        "https://rocm.docs.amd.com/projects/MIOpen/en/latest/",
    ),
)


def _last_resort(category: str, pattern: str, what: str, error_line: bool = True) -> Rule:
    """A rule tried after every rule above, on weak evidence that its cause says: a line that reports an error
    names a component (a name on an info line, such as a list of available backends, is no diagnosis), or an
    environment report shows a build without ROCm."""
    rule = next(r for r in RULES if r.category == category)
    cause = f"Only {what} matched: judge the line yourself. {rule.cause}"
    return replace(rule, patterns=(pattern,), cause=cause, error_line=error_line)


_NOT_OURS = r"(?!torch|c10|hsa-amd-aql|cu|nv|nccl)"  # a library name that is not torch's, ROCr's profiler's, NVIDIA's

RULES += (  # chosen on the development rows: no `unknown` text names Triton or NCCL on an error line
    _last_resort("triton_rocm", r"(?<![/\\])\btriton\b(?![/\\])", "a name"),  # not a folder named triton
    # also vLLM's PyNcclCommunicator; not nccl.dll: Windows has no NCCL (ZLUDA ships a stand-in of that name)
    _last_resort("distributed_backend", r"\b[nr]ccl(?!\.dll)|pynccl", "a name"),
    # a traceback cut off inside torch.distributed (or a framework's distributed module) before its error line; not
    # in torchrun's launcher (run.py, launcher/, elastic/), which only reports that a worker failed
    _last_resort(
        "distributed_backend",
        r"[/\\]distributed(\.py|[/\\](?!run\.py|launcher|elastic)\S*\.py)\", line \d+",  # (DDP's distributed.py)
        "a traceback through a distributed module, without its error line",
        error_line=False,
    ),
    # a shared library (not torch's own) that did not load: a ROCm library, or one it needs from the system (libnuma,
    # libtinfo); not torch's own libc10/libtorch_* (a build or import-order problem of an extension), nor NVIDIA's
    _last_resort(
        "shared_lib_load",
        # (nor ROCr's optional profiler library, whose LoadLib failure it logs and goes on)
        rf"(cannot open shared object file|could not open|cannot open|unable to (open|load))\W+lib{_NOT_OURS}\w"
        rf"|(ImportError|OSError): lib{_NOT_OURS}[\w+-]+\.so[\w.]*: cannot open shared object file",
        "a shared library that did not load (a ROCm library, or one it needs from the system: libnuma, libtinfo)",
        error_line=False,
    ),
    # a traceback cut off where it imports a package's compiled CUDA/HIP module (flash_attn_2_cuda), its error unseen
    _last_resort(
        "missing_extension",
        r"\n\s*(import \w+_(cuda|hip)\b|from \w+_(cuda|hip) import)",
        "a traceback that stops at the import of a compiled extension, without its error line",
        error_line=False,
    ),
    # torch.utils.collect_env's report of a torch without ROCm (a CUDA or CPU build), where nothing else matched
    _last_resort("wrong_wheel", r"ROCM used to build PyTorch: N/A", "an environment report", error_line=False),
)

UNKNOWN = Diagnosis(
    "unknown",
    "Not a known ROCm porting error",
    "None of the known patterns matched.",
    [
        "Search the issue trackers for the error line itself (github.com/ROCm/ROCm/issues, "
        "github.com/pytorch/pytorch/issues)",
        "python -m helpers.doctor --json   # this machine's facts (GPU, driver, torch build), to paste into a report",
        "python -m torch.utils.collect_env   # PyTorch's own environment report",
        "AMD_SERIALIZE_KERNEL=3 python your_script.py   # synchronous launches: the error points at its real line",
    ],
    HIP_DOCS,
)


def _lower_pattern(pattern: str) -> str:
    """The pattern for lower-cased text: literals lowered, escapes (\\S, \\W, \\d, ...) kept as they are."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        else:
            out.append(pattern[i].lower())
            i += 1
    return "".join(out)


# Case-insensitive matching, fast: the text is lower-cased once and searched with lower-cased patterns (a search
# with re.IGNORECASE is an order of magnitude slower on long logs). _SLOW is the fallback for the rare text whose
# lower-casing changes its length (some non-ASCII letters), where match positions would not line up.
_COMPILED = [(r, [re.compile(_lower_pattern(p)) for p in r.patterns]) for r in RULES]
_SLOW = [(r, [re.compile(p, re.IGNORECASE) for p in r.patterns]) for r in RULES]


def _required(pattern: str) -> str:
    r"""The longest run of plain characters that every match of ``pattern`` contains ("cannot open shared object file"
    in r"\w+\.so: cannot open shared object file"), read from Python's own parse of it; "" when there is none or the
    parser is not there. A text without it cannot match, so the search is skipped: `in` is far cheaper than a regex
    that must try every position."""
    try:
        from re import _constants, _parser  # (Python's regex parser: private, so used only as a shortcut)

        best, run = "", ""
        for op, arg in _parser.parse(pattern):
            run = run + chr(arg) if op is _constants.LITERAL else ""
            best = max(best, run, key=len)
        return best
    except Exception:
        return ""


_NEEDS = {rx: _required(rx.pattern) for _, patterns in _COMPILED for rx in patterns}  # (lower-cased, like the text)
# Two tests of a line, on purpose not one: the line an `unknown` answer tells you to search for must be the error
# itself (RuntimeError:, error:, FAILED), while a name-only rule may key on any line that mentions a failure ("Triton
# compilation failed", "NCCL errors"), and on none that only lists names.
_ERROR_LINE = re.compile(r"\b\w*(Error|Exception)\b|error:|\bFAILED\b|\bfatal\b|Aborted|Segmentation fault", re.I)
_REPORTS_ERROR = re.compile(r"error|exception|fail|fatal|abort", re.I)
_SPAN = 1000  # the most characters a pattern may span across lines (F.conv2d( ... launch failure does)


# Terminal colours: Python 3.13+ colours its tracebacks where FORCE_COLOR is set (ipykernel sets it for the processes
# a notebook starts), as many tools do; the words between the codes are what the rules read.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# What launchers and CI runners put before every line (torchrun's [rank0]: / [default0]:, a CI log's timestamp, vLLM's
# INFO stamp): a message split over two lines must still read as one.
_LINE_PREFIX = re.compile(
    r"^(\[(rank|default)\d+\]: ?|\d{4}-\d\d-\d\dT[\d:.]+Z |(INFO|WARNING|ERROR) \d\d-\d\d [\d:]+ )", re.M
)


def _clean(text: str) -> str:
    """The text the rules read: Windows line ends as Unix ones, no colour codes, no per-line launcher prefixes."""
    return _LINE_PREFIX.sub("", _ANSI.sub("", text.replace("\r\n", "\n")))


def _text(error) -> str:
    if isinstance(error, BaseException):
        return "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if isinstance(error, bytes):
        return _clean(error.decode("utf-8", "replace"))
    return _clean(str(error))


def _found(rule: Rule, line: str) -> Diagnosis:
    return Diagnosis(rule.category, rule.title, rule.cause, list(rule.fix), rule.source, line.strip()[:300])


def _unknown(lines) -> Diagnosis:
    """UNKNOWN, with the line to search for: the last one that looks like an error."""
    key = next((ln.strip() for ln in reversed(list(lines)) if _ERROR_LINE.search(ln)), "")
    if not key:
        return UNKNOWN
    fix = [f"Search the issue trackers for: {key[:200]!r} (github.com/ROCm/ROCm/issues, "
           "github.com/pytorch/pytorch/issues)", *UNKNOWN.fix[1:]]  # fmt: skip
    return Diagnosis(UNKNOWN.category, UNKNOWN.title, UNKNOWN.cause, fix, UNKNOWN.source)


def _first(text: str, rules: int, limit: int | None = None) -> tuple[int, str] | None:
    """(index of the first of the first ``rules`` rules that matches ``text``, the line of its earliest match) or None.
    Only matches that start before ``limit`` count (diagnose_lines searches the rest again, with what follows)."""
    low = text.lower()
    table, hay = (_COMPILED, low) if len(low) == len(text) else (_SLOW, text)
    end = len(hay) if limit is None else limit
    for i in range(rules):
        rule, patterns = table[i]
        start, line = end, None
        for rx in patterns:
            if _NEEDS.get(rx, "") not in hay:  # (_SLOW's patterns have no entry: always searched)
                continue
            for m in rx.finditer(hay):
                if m.start() >= start:
                    break
                a, b = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
                here = text[a : b if b != -1 else len(text)]
                if not rule.error_line or _REPORTS_ERROR.search(here):
                    start, line = m.start(), here
                    break
        if line is not None:
            return i, line
    return None


def diagnose(error) -> Diagnosis:
    """Classify an exception or an error text; never raises. ``matched`` is the line it keyed on."""
    try:
        text = _text(error)
    except Exception:  # an exception whose __str__ fails, for instance
        return UNKNOWN
    hit = _first(text, len(RULES))
    return _found(RULES[hit[0]], hit[1]) if hit else _unknown(text.splitlines()[-200:])


def diagnose_lines(lines, chunk_bytes: int = 1 << 20) -> Diagnosis:
    """Like :func:`diagnose`, for a log read line by line (an open file, stdin): bounded memory, any size.

    The same answer as ``diagnose(whole_text)``: the rule that comes first in RULES wins, wherever its line is.
    Lines are searched in chunks of about ``chunk_bytes``, and only for rules before the best match so far. The
    last lines of a chunk (at least _SPAN characters) start the next one, and a match that starts in them counts
    only there: so a pattern that looks up to _SPAN characters ahead (across lines) sees them on a chunk border too.
    """
    best, best_line, tail, chunk, size = len(RULES), "", deque(maxlen=200), [], 0
    for raw in lines:
        line = _clean(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw))
        tail.append(line)
        chunk.append(line if line.endswith("\n") else line + "\n")
        size += len(line)
        if size >= chunk_bytes:
            keep, kept = [], 0
            while chunk and kept < _SPAN:  # the last lines, carried into the next chunk
                keep.append(chunk.pop())
                kept += len(keep[-1])
            text = "".join(chunk + keep[::-1])
            hit = _first(text, best, limit=len(text) - kept)
            best, best_line = hit if hit else (best, best_line)
            if best == 0:
                break
            chunk, size = keep[::-1], 0
    hit = _first("".join(chunk), best) if chunk else None
    best, best_line = hit if hit else (best, best_line)
    return _found(RULES[best], best_line) if best < len(RULES) else _unknown(tail)


def format_diagnosis(d: Diagnosis) -> str:
    lines = [f"[{d.category}] {d.title}"]
    if d.matched:
        lines.append(f"  matched: {d.matched}")
    lines.append(f"  cause:   {d.cause}")
    lines.append("  fix:")
    lines += [f"    {i}. {step}" for i, step in enumerate(d.fix, 1)]
    lines.append(f"  source:  {d.source}")
    return "\n".join(lines)


def install() -> bool:
    """In IPython/Jupyter: print the diagnosis under every traceback. Returns False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False

    def handler(shell, etype, value, tb, tb_offset=None):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        d = diagnose(value)
        if d.category != "unknown":
            print("\nhelpers.diagnose:\n" + format_diagnosis(d))

    ip.set_custom_exc((Exception,), handler)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers.diagnose", description="Explain a PyTorch/ROCm error.")
    ap.add_argument("file", nargs="?", default="-", help="file holding the error or log (default: stdin)")
    ap.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    a = ap.parse_args(argv)
    try:
        if a.file == "-":
            d = diagnose_lines(sys.stdin.buffer)
        else:
            with open(a.file, "rb") as f:  # read line by line: a 50 MB log never sits in memory at once
                d = diagnose_lines(f)
    except OSError as e:
        print(f"error: cannot read {a.file}: {e.strerror}", file=sys.stderr)
        return 2
    print(json.dumps(asdict(d), indent=2) if a.json else format_diagnosis(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
