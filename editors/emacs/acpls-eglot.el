;;; acpls-eglot.el --- use acpls (an ACP agent) from Emacs through eglot  -*- lexical-binding: t; -*-

;; Emacs 28+ with eglot (Debian: elpa-eglot).  acpls runs in generic LSP mode:
;; - follow-along opens files with window/showDocument,
;; - permission prompts are eglot's showMessageRequest completions,
;; - the conversation is a live markdown transcript (M-x acpls-open-transcript),
;; - M-x acpls-prompt asks the agent; the active region goes along as context.

(require 'eglot)
(require 'json)

(defgroup acpls nil "ACP agents through the acpls language server." :group 'tools)

(defcustom acpls-agent "claude"
  "The agent preset (claude, gemini, codex, goose, opencode, demo) or a plist (:command ... :args [...])."
  :type '(choice string plist))

(defcustom acpls-command '("acpls")
  "How to start acpls."
  :type '(repeat string))

(defun acpls--init-options (_server)
  (list :agent acpls-agent :follow (list :enabled t)))

(dolist (mode '(python-mode prog-mode text-mode markdown-mode))
  (add-to-list 'eglot-server-programs
               `(,mode . (,@acpls-command :initializationOptions acpls--init-options))))

(defun acpls--execute (command arguments)
  (let ((server (eglot-current-server)))
    (unless server (user-error "acpls: no eglot server here; M-x eglot first"))
    (eglot-execute-command server command (vector arguments))))

(defun acpls-prompt (text)
  "Send TEXT to the agent; with an active region, the region goes along as context."
  (interactive "sAsk the agent: ")
  (let ((context (when (use-region-p)
                   (vector (list :uri (eglot--path-to-uri (buffer-file-name))
                                 :range (list :start (eglot--pos-to-lsp-position (region-beginning))
                                              :end (eglot--pos-to-lsp-position (region-end))))))))
    (acpls--execute "acpls.prompt" (if context (list :text text :context context) (list :text text)))))

(defun acpls-cancel ()
  "Cancel the agent's turn."
  (interactive)
  (acpls--execute "acpls.cancel" (list)))

(defun acpls-open-transcript ()
  "Open the live transcript of the current session."
  (interactive)
  (acpls--execute "acpls.openTranscript" (list)))

(defun acpls-follow (enabled)
  "Turn follow-along on (with a prefix argument: off)."
  (interactive (list (not current-prefix-arg)))
  (acpls--execute "acpls.setFollow" (list :enabled (if enabled t :json-false))))

;; Transcripts change while the agent works: revert them automatically.
(add-hook 'find-file-hook
          (lambda ()
            (when (and buffer-file-name (string-match-p "/acpls/transcripts/" buffer-file-name))
              (auto-revert-mode 1))))

(provide 'acpls-eglot)
;;; acpls-eglot.el ends here
