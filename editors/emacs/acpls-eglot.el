;;; acpls-eglot.el --- ask an ACP coding agent from Emacs, through eglot and acpls  -*- lexical-binding: t; -*-

;; Works with Emacs 28 and Debian's elpa-eglot 1.9, and with newer eglot.
;;
;; acpls is a language server that starts an ACP agent (Claude, Gemini, Codex, the built-in demo…)
;; and turns what the agent does into plain LSP.  eglot is a plain LSP client, so acpls runs in its
;; "generic" mode:
;; - M-x acpls-prompt asks the agent (the active region goes along as context); Emacs stays usable
;;   while the agent works, and the echo area says when the turn ends;
;; - the conversation is a live, read-only markdown transcript that acpls writes under
;;   $XDG_STATE_HOME/acpls/transcripts/ (never in your project); it opens beside your code and
;;   reverts itself as the agent writes (M-x acpls-open-transcript reopens it);
;; - follow-along: when the agent reads or edits a file, that file is shown at that line in another
;;   window, without taking the focus (M-x acpls-follow, with C-u to turn it off);
;; - permission prompts ("Allow", "Reject", …) are asked in the minibuffer; C-g dismisses (acpls then
;;   picks the agent's "reject once" option);
;; - M-x eglot-code-actions on a region offers "Ask the agent about this selection…", on a line
;;   with an `@agent <question>' comment "Send to agent: <question>", and on a Flymake diagnostic
;;   (your linters keep running in acpls buffers) "Ask the agent to fix: <message>" and "Ask the
;;   agent to fix all diagnostics in this file".
;;
;; Setup: put this file on your load-path, then
;;   (require 'acpls-eglot)
;;   (setq acpls-agent "claude")            ; or "gemini", "codex", "goose", "opencode", "demo"
;; and in a file of your project run M-x acpls-start.  To have eglot always use acpls for some major
;; modes, customize `acpls-modes' before loading this file.
;;
;; eglot before 1.10 runs one server per buffer: acpls-start replaces that buffer's other language
;; server.  acpls-prompt works from any buffer of a project where acpls runs.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'autorevert)

(defgroup acpls nil "ACP coding agents through the acpls language server." :group 'tools)

(defcustom acpls-agent "claude"
  "The agent acpls starts.
A preset name (\"claude\", \"gemini\", \"codex\", \"goose\", \"opencode\",
\"demo\") or a plist such as
  (:command \"my-agent\" :args [\"--acp\"] :env (:NAME \"value\")).
Arrays must be vectors."
  :type '(choice string plist))

(defcustom acpls-protocol-version "auto"
  "The ACP version to speak: \"auto\" (ask for 2, accept 1), 1 or 2."
  :type '(choice (const "auto") (const 1) (const 2)))

(defcustom acpls-follow t
  "Whether files the agent reads or edits are shown as it works."
  :type 'boolean)

(defcustom acpls-extra-settings nil
  "More acpls settings, a plist added to the initialization options.
For example (:permissions (:autoApprove [\"read\"])).
See editors/protocol.md, section 1."
  :type 'plist)

(defcustom acpls-confirm-edits nil
  "Whether eglot asks again before the agent's file writes land in buffers.
acpls has usually asked already, in the agent's permission prompt; the
writes are ordinary buffer edits (unsaved, undoable) either way."
  :type 'boolean)

(defcustom acpls-save-edits t
  "Whether to save the agent's file writes.
Only buffers that had no unsaved changes are saved.  The agent often
runs tests or builds next, which read the files on disk."
  :type 'boolean)

(defcustom acpls-command '("acpls")
  "The command that starts acpls, as a list of strings."
  :type '(repeat string))

(defcustom acpls-modes nil
  "Major modes whose buffers eglot manages with acpls.
acpls then replaces any other language server of these modes.  Read
when this file is loaded; \\[acpls-start] works in any mode without it."
  :type '(repeat symbol))

(defvar acpls-after-turn-functions nil
  "Functions called when an `acpls-prompt' turn ends.
Each gets two arguments: the result plist (:sessionId :stopReason) or
nil, and an error message or nil.")

(defclass acpls-eglot-server (eglot-lsp-server) ()
  :documentation "An eglot connection to acpls.")

(defun acpls--init-options (_server)
  "The acpls settings sent as initializationOptions."
  (append (list :agent acpls-agent
                :protocolVersion acpls-protocol-version
                :follow (list :enabled (if acpls-follow t :json-false)))
          acpls-extra-settings))

(defun acpls--contact (&optional _interactive)
  "How eglot starts acpls (an `eglot-server-programs' contact)."
  `(acpls-eglot-server ,@acpls-command :initializationOptions acpls--init-options))

(dolist (mode acpls-modes)
  (add-to-list 'eglot-server-programs (cons mode #'acpls--contact)))

;;;###autoload
(defun acpls-start ()
  "Start acpls for this buffer's major mode in this project.
It replaces another eglot server of that mode and project."
  (interactive)
  (let ((eglot-server-programs (cons (cons major-mode #'acpls--contact) eglot-server-programs)))
    (apply #'eglot (eglot--guess-contact))))

(defun acpls--server ()
  "The acpls connection of this buffer or, failing that, of this buffer's project."
  (let ((current (eglot-current-server)))
    (or (and (cl-typep current 'acpls-eglot-server) current)
        (cl-find-if (lambda (server) (cl-typep server 'acpls-eglot-server))
                    (gethash (eglot--current-project) eglot--servers-by-project))
        (user-error "acpls is not running for this project: M-x acpls-start first"))))

(defun acpls--execute (server command argument &optional on-result)
  "Run acpls COMMAND on SERVER with ARGUMENT (a plist), without blocking.
ON-RESULT gets the result and nil, or nil and the error message.  There
is no timeout: a prompt lasts as long as the agent works."
  (jsonrpc-async-request
   server :workspace/executeCommand
   (list :command command :arguments (vector (or argument (make-hash-table))))
   :timeout nil
   :success-fn (lambda (result) (when on-result (funcall on-result result nil)))
   :error-fn (lambda (error)
               (let ((text (or (plist-get error :message) (format "%S" error))))
                 (if on-result
                     (funcall on-result nil text)
                   (message "acpls: %s failed: %s" command text))))))

(defun acpls--revert-changed-buffers (server)
  "Revert unmodified buffers of SERVER's project whose files changed.
Agents that speak ACP v2 write files themselves; acpls applies only ACP
v1 writes as LSP edits, which land in the buffers."
  (let ((root (file-truename (project-root (eglot--project server)))))
    (dolist (buffer (buffer-list))
      (let ((file (buffer-file-name buffer)))
        (when (and file
                   (string-prefix-p root (file-truename file))
                   (not (buffer-modified-p buffer))
                   (file-exists-p file)
                   (not (verify-visited-file-modtime buffer)))
          (with-current-buffer buffer (revert-buffer t t t)))))))

(defun acpls--turn-ended (server result error)
  "Tell the user how SERVER's turn ended, then run `acpls-after-turn-functions'."
  (acpls--revert-changed-buffers server)
  (if error
      (message "acpls: the agent's turn failed: %s" error)
    (message "acpls: turn ended (%s)" (plist-get result :stopReason)))
  (run-hook-with-args 'acpls-after-turn-functions result error))

(defun acpls--region-context ()
  "The active region as an acpls context item, or nil."
  (when (and (use-region-p) buffer-file-name)
    (list :uri (eglot--path-to-uri buffer-file-name)
          :range (list :start (eglot--pos-to-lsp-position (region-beginning))
                       :end (eglot--pos-to-lsp-position (region-end))))))

;;;###autoload
(defun acpls-prompt (text)
  "Ask the agent TEXT; with an active region, the region goes along as context."
  (interactive
   (list (read-string (if (use-region-p) "Ask the agent about the region: " "Ask the agent: "))))
  (let ((context (acpls--region-context))
        (server (acpls--server)))
    (acpls--execute server "acpls.prompt"
                    (if context (list :text text :context (vector context)) (list :text text))
                    (lambda (result error) (acpls--turn-ended server result error)))))

(defun acpls-cancel ()
  "Cancel the agent's current turn."
  (interactive)
  (acpls--execute (acpls--server) "acpls.cancel" nil))

(defun acpls-new-session ()
  "Start a new conversation with the agent."
  (interactive)
  (acpls--execute (acpls--server) "acpls.newSession" nil
                  (lambda (result error)
                    (message "acpls: %s" (or error (format "new session %s" (plist-get result :sessionId)))))))

(defun acpls-open-transcript ()
  "Open the live transcript of the current session."
  (interactive)
  (acpls--execute (acpls--server) "acpls.openTranscript" nil
                  (lambda (result error)
                    (if error
                        (message "acpls: %s" error)
                      ;; acpls also sends window/showDocument; opening it again only shows it.
                      (acpls--show (eglot--uri-to-path (plist-get result :uri)) nil t)))))

(defun acpls-follow (enabled)
  "Turn follow-along on; with a prefix argument, off."
  (interactive (list (not current-prefix-arg)))
  (acpls--execute (acpls--server) "acpls.setFollow" (list :enabled (if enabled t :json-false))
                  (lambda (result error)
                    (message "acpls: %s" (or error (if (eq (plist-get result :enabled) t)
                                                       "following the agent"
                                                     "not following the agent"))))))

;;; What acpls asks of the editor.

(defun acpls--transcript-p (path)
  (string-match-p "/acpls/transcripts/[^/]+\\.md\\'" path))

(defun acpls--setup-transcript ()
  "A transcript is written by acpls: keep the buffer read-only and up to date."
  (setq buffer-read-only t)
  (setq-local auto-revert-verbose nil)
  ;; Reverting makes a writable file's buffer writable again.
  (add-hook 'after-revert-hook (lambda () (setq buffer-read-only t)) nil t)
  (auto-revert-mode 1))

(defun acpls--show (path selection take-focus)
  "Show PATH, at SELECTION (an LSP range plist) when given.
Select its window only when TAKE-FOCUS."
  (let ((buffer (find-file-noselect path)))
    (with-current-buffer buffer
      (cond ((acpls--transcript-p path)
             (unless auto-revert-mode (acpls--setup-transcript))
             (revert-buffer t t t))
            ((and (not (buffer-modified-p)) (not (verify-visited-file-modtime buffer)))
             (revert-buffer t t t))))
    (let ((window (if take-focus
                      (progn (pop-to-buffer buffer) (selected-window))
                    (display-buffer buffer))))
      (with-current-buffer buffer
        (let ((point (cond (selection (eglot--lsp-position-to-point (plist-get selection :start)))
                           ((acpls--transcript-p path) (point-max)))))
          (when point
            (goto-char point)
            (when (window-live-p window) (set-window-point window point))))))
    buffer))

(cl-defmethod eglot-client-capabilities ((server acpls-eglot-server))
  "Add window/showDocument to SERVER's client capabilities.
eglot 1.9 lacks it; acpls needs it for follow-along and the transcript."
  (let* ((capabilities (cl-call-next-method server))
         (window (plist-get capabilities :window)))
    (plist-put capabilities :window (plist-put window :showDocument (list :support t)))))

(cl-defmethod eglot-handle-request
  ((_server acpls-eglot-server) (_method (eql window/showDocument))
   &key uri external takeFocus selection &allow-other-keys)
  "Follow-along and the transcript: show URI at SELECTION.
EXTERNAL URIs go to the browser; TAKEFOCUS selects the window."
  (if (eq external t)
      (progn (browse-url uri) (list :success t))
    (acpls--show (eglot--uri-to-path uri) selection (eq takeFocus t))
    (list :success t)))

(cl-defmethod eglot-handle-request
  ((_server acpls-eglot-server) (_method (eql window/showMessageRequest))
   &key _type message actions &allow-other-keys)
  "Permission prompts: MESSAGE and every one of ACTIONS, no default.
C-g answers \"dismissed\": without the `quit' handler it would leave
acpls, and the agent, waiting for an answer."
  (let ((titles (mapcar (lambda (action) (plist-get action :title)) (append actions nil))))
    (condition-case nil
        (let ((choice (completing-read (format "acpls: %s\nChoose: " message) titles nil t)))
          (if (member choice titles) (list :title choice) :null))
      (quit :null))))

(defun acpls--edit-buffers (edit)
  "The buffers that workspace EDIT changes, visiting their files if needed."
  (let ((uris (mapcar (lambda (change)
                        (plist-get (plist-get change :textDocument) :uri))
                      (append (plist-get edit :documentChanges) nil))))
    (cl-loop for (uri _edits) on (plist-get edit :changes) by #'cddr
             ;; eglot 1.9 reads object keys as keywords.
             do (push (substring (symbol-name uri) 1) uris))
    (mapcar (lambda (uri) (find-file-noselect (eglot--uri-to-path uri)))
            (delq nil uris))))

(cl-defmethod eglot-handle-request
  ((_server acpls-eglot-server) (_method (eql workspace/applyEdit))
   &key _label edit &allow-other-keys)
  "The agent's file writes (ACP v1): apply EDIT, visiting its files first.
With `acpls-save-edits', buffers that had no unsaved changes are saved,
so what the agent runs next sees its edit.  A refusal or a failure is
answered as not applied, so acpls can tell the agent."
  (condition-case err
      (let* ((buffers (acpls--edit-buffers edit))
             (clean (cl-remove-if #'buffer-modified-p buffers)))
        (eglot--apply-workspace-edit edit acpls-confirm-edits)
        (when acpls-save-edits
          (dolist (buffer clean)
            (with-current-buffer buffer (save-buffer))))
        (list :applied t))
    (quit (list :applied :json-false :failureReason "the user refused the edit"))
    (error (list :applied :json-false :failureReason (error-message-string err)))))

(cl-defmethod eglot-execute-command ((server acpls-eglot-server) command arguments)
  "Run COMMAND with ARGUMENTS on SERVER without blocking.
Code actions come here; a prompt reports its end like `acpls-prompt'."
  (let ((name (format "%s" command))
        (argument (and (> (length arguments) 0) (aref arguments 0))))
    (acpls--execute server name argument
                    (when (equal name "acpls.prompt")
                      (lambda (result error) (acpls--turn-ended server result error))))))

;;; "Ask the agent to fix": acpls offers it on every diagnostic a code action request carries.

(defun acpls--lsp-diagnostic (diag)
  "Flymake diagnostic DIAG as an LSP Diagnostic plist (the backend is its source)."
  (let ((type (flymake-diagnostic-type diag)))
    (list :range (list :start (eglot--pos-to-lsp-position (flymake-diagnostic-beg diag))
                       :end (eglot--pos-to-lsp-position (flymake-diagnostic-end diag)))
          :severity (cond ((memq type '(:error eglot-error)) 1)
                          ((memq type '(:warning eglot-warning)) 2)
                          (t 3))
          :source (format "%s" (or (flymake-diagnostic-backend diag) "flymake"))
          :message (flymake-diagnostic-text diag))))

(defun acpls--as-eglot-diagnostic (diag)
  "DIAG itself when eglot made it, else a copy that eglot passes to the server."
  (if (assoc 'eglot-lsp-diag (flymake-diagnostic-data diag))
      diag
    (flymake-make-diagnostic (current-buffer) (flymake-diagnostic-beg diag)
                             (flymake-diagnostic-end diag) (flymake-diagnostic-type diag)
                             (flymake-diagnostic-text diag)
                             (list (cons 'eglot-lsp-diag (acpls--lsp-diagnostic diag))))))

(defun acpls--code-actions (code-actions beg &optional end &rest more)
  "Run CODE-ACTIONS (`eglot-code-actions') from BEG to END with MORE arguments.
eglot sends only its own server's diagnostics with a code action
request, and acpls reports none: for acpls, send the buffer's other
Flymake diagnostics there (your linters'), so acpls can offer \"Ask
the agent to fix: ...\".  With no region, the diagnostics at BEG."
  (if (not (cl-typep (eglot-current-server) 'acpls-eglot-server))
      (apply code-actions beg end more)
    (let ((diagnostics (symbol-function 'flymake-diagnostics)))
      (cl-letf (((symbol-function 'flymake-diagnostics)
                 (lambda (&optional from to)
                   (mapcar #'acpls--as-eglot-diagnostic
                           (if (and from (or (null to) (= from to)))
                               (funcall diagnostics from)
                             (funcall diagnostics from to))))))
        (apply code-actions beg end more)))))

(advice-add 'eglot-code-actions :around #'acpls--code-actions)

(defun acpls--keep-flymake-backends ()
  "In a buffer eglot manages with acpls, keep its own Flymake backends.
eglot replaces them with its backend, but acpls reports no diagnostics:
the linters' diagnostics are the ones to ask the agent to fix."
  (when (and (eglot-managed-p)
             (cl-typep (eglot-current-server) 'acpls-eglot-server)
             (boundp 'eglot--saved-bindings))
    (let ((saved (assq 'flymake-diagnostic-functions eglot--saved-bindings)))
      (when saved
        (setq-local flymake-diagnostic-functions
                    (append (remq 'eglot-flymake-backend (cdr saved)) '(eglot-flymake-backend)))
        (when (bound-and-true-p flymake-mode) (flymake-start t))))))

(add-hook 'eglot-managed-mode-hook #'acpls--keep-flymake-backends)

;; eglot 1.15 and later run code actions through `eglot-execute' instead.
(when (cl-generic-p 'eglot-execute)
  (cl-defmethod eglot-execute ((server acpls-eglot-server) action)
    "Run ACTION's acpls command on SERVER without blocking.
ACTION is a Command, or a CodeAction that carries one and no edit."
    (let* ((inner (plist-get action :command))
           (command (if (stringp inner) action inner)))
      (if (and (stringp (plist-get command :command)) (not (plist-get action :edit)))
          (eglot-execute-command server (plist-get command :command)
                                 (plist-get command :arguments))
        (cl-call-next-method)))))

(provide 'acpls-eglot)
;;; acpls-eglot.el ends here
