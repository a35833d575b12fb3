"""What a denied module gives a skill, as a capability and the rule id that reports it."""

MODULE_CAPABILITIES: dict[str, tuple[str, str]] = {
    # module root: (rule id, capability)
    "os": ("POL-PROCESS", "process execution, environment and filesystem access"),
    "subprocess": ("POL-PROCESS", "process execution"),
    "multiprocessing": ("POL-PROCESS", "process execution"),
    "pty": ("POL-PROCESS", "process execution"),
    "posix": ("POL-PROCESS", "process execution"),
    "concurrent": ("POL-TAMPER", "threads or processes that outlive the call"),
    "threading": ("POL-TAMPER", "threads that outlive the call"),
    "_thread": ("POL-TAMPER", "threads that outlive the call"),
    "signal": ("POL-TAMPER", "signal handlers"),
    "atexit": ("POL-TAMPER", "exit hooks"),
    "sys": ("POL-TAMPER", "interpreter tampering (sys.modules, sys.path)"),
    "builtins": ("POL-TAMPER", "builtins tampering"),
    "gc": ("POL-INTROSPECTION", "object graph introspection"),
    "inspect": ("POL-INTROSPECTION", "frame and code introspection"),
    "traceback": ("POL-INTROSPECTION", "frame introspection"),
    "types": ("POL-DYNAMIC-CODE", "code and function objects"),
    "socket": ("POL-NETWORK", "network access around the HTTP handle"),
    "ssl": ("POL-NETWORK", "network access"),
    "urllib": ("POL-NETWORK", "network access around the HTTP handle"),
    "http": ("POL-NETWORK", "network access around the HTTP handle"),
    "httpx": ("POL-NETWORK", "network access around the HTTP handle"),
    "requests": ("POL-NETWORK", "network access around the HTTP handle"),
    "asyncio": ("POL-NETWORK", "network and subprocess access"),
    "ftplib": ("POL-NETWORK", "network access"),
    "smtplib": ("POL-NETWORK", "network access (messaging)"),
    "telnetlib": ("POL-NETWORK", "network access"),
    "xmlrpc": ("POL-NETWORK", "network access"),
    "ctypes": ("POL-NATIVE", "native code"),
    "cffi": ("POL-NATIVE", "native code"),
    "mmap": ("POL-NATIVE", "raw memory"),
    "importlib": ("POL-DYNAMIC-CODE", "dynamic imports"),
    "imp": ("POL-DYNAMIC-CODE", "dynamic imports"),
    "pkgutil": ("POL-DYNAMIC-CODE", "dynamic imports"),
    "runpy": ("POL-DYNAMIC-CODE", "dynamic code"),
    "code": ("POL-DYNAMIC-CODE", "dynamic code"),
    "codeop": ("POL-DYNAMIC-CODE", "dynamic code"),
    "marshal": ("POL-DYNAMIC-CODE", "code object loading"),
    "pickle": ("POL-DYNAMIC-CODE", "pickle loads run arbitrary code"),
    "shelve": ("POL-DYNAMIC-CODE", "pickle loads run arbitrary code"),
    "dill": ("POL-DYNAMIC-CODE", "pickle loads run arbitrary code"),
    "pathlib": ("POL-FS", "filesystem access around the vault handle"),
    "io": ("POL-FS", "filesystem access around the vault handle"),
    "shutil": ("POL-FS", "filesystem writes"),
    "tempfile": ("POL-FS", "filesystem writes"),
    "glob": ("POL-FS", "filesystem reads outside the vault"),
    "fileinput": ("POL-FS", "filesystem reads outside the vault"),
    "sqlite3": ("POL-FS", "filesystem writes"),
    "zipfile": ("POL-FS", "filesystem access"),
    "tarfile": ("POL-FS", "filesystem access"),
    "linecache": ("POL-FS", "filesystem reads"),
    "codecs": ("POL-FS", "filesystem access (codecs.open)"),
}

# Names in the policy's `denied_attributes`, with the rule and capability that report them; anything else there
# is an introspection escape (frame, code and generator internals).
ATTRIBUTE_CAPABILITIES: dict[str, tuple[str, str]] = {
    "FunctionType": ("POL-DYNAMIC-CODE", "functions built from code objects"),
    "CodeType": ("POL-DYNAMIC-CODE", "code objects"),
    "LambdaType": ("POL-DYNAMIC-CODE", "functions built from code objects"),
    "ForwardRef": ("POL-DYNAMIC-CODE", "strings evaluated as type expressions (eval)"),
    "get_type_hints": ("POL-DYNAMIC-CODE", "string annotations evaluated at run time (eval)"),
    "evaluate_forwardref": ("POL-DYNAMIC-CODE", "strings evaluated as type expressions (eval)"),
    "create_model": ("POL-DYNAMIC-CODE", "classes built at run time from values, string types evaluated (eval)"),
    "make_dataclass": ("POL-DYNAMIC-CODE", "classes built at run time from values, string types evaluated (eval)"),
    "import_string": ("POL-DYNAMIC-CODE", "imports by name"),
    "ImportString": ("POL-DYNAMIC-CODE", "imports by name while validating input"),
    "parse_file": ("POL-FS", "reads a file by path, around the vault handle"),
    "parse_file_as": ("POL-FS", "reads a file by path, around the vault handle"),
    "FilePath": ("POL-FS", "probes paths outside the vault"),
    "DirectoryPath": ("POL-FS", "probes paths outside the vault"),
    "NewPath": ("POL-FS", "probes paths outside the vault"),
    "Formatter": ("POL-ESCAPE", "format fields that reach attributes by name"),
}


def capability_of(module: str) -> tuple[str, str]:
    return MODULE_CAPABILITIES.get(module.split(".")[0], ("POL-IMPORT", "a module outside the allowlist"))


def attribute_capability(name: str) -> tuple[str, str]:
    return ATTRIBUTE_CAPABILITIES.get(name, ("POL-INTROSPECTION", "frame, code or generator internals"))
