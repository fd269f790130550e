;;; eglot_execute_shim.el --- eglot 1.15's `eglot-execute' generic, for tests on eglot 1.9  -*- lexical-binding: t; -*-

;; eglot 1.15 and later run code actions through the generic `eglot-execute'; Debian's eglot 1.9
;; has none.  Declared here before acpls-eglot.el loads, with a default method that fails, it lets
;; a test check that acpls' own method runs an acpls code action (without blocking).

(require 'eglot)

(cl-defgeneric eglot-execute (server action)
  "Stand-in for eglot 1.15's generic: ask SERVER to execute ACTION.")

(cl-defmethod eglot-execute (_server _action)
  "The stand-in default: acpls' method should have been used instead."
  (error "eglot-execute stand-in: acpls' method was not used"))

;;; eglot_execute_shim.el ends here
