;;; emacs_drive.el --- drive editors/emacs/acpls-eglot.el in `emacs --batch' for tests  -*- lexical-binding: t; -*-

;; Load after acpls-eglot.el.  Inputs come from the environment:
;;   ACPLS_TEST_SERVER  the acpls argv, fields separated by ASCII unit separators (\x1f);
;;                      unset: the configuration's default, `acpls' from PATH
;;   ACPLS_TEST_FILE    the file to open (in the test workspace)
;;   ACPLS_TEST_PROMPT  what to ask the agent
;;   ACPLS_TEST_REGION  "LINE1:LINE2" (1-based, inclusive) to select before asking, or empty
;;   ACPLS_TEST_ANSWER  the permission option to pick (the user's answer to the minibuffer prompt)
;;   ACPLS_TEST_ACTION  if set, run the code action of that title instead of `acpls-prompt'
;;   ACPLS_TEST_EXECUTE  with ACPLS_TEST_ACTION: run it through `eglot-execute' (eglot 1.15+)
;;   ACPLS_TEST_PROTOCOL  "1", "2" or "auto" (the default)
;;   ACPLS_TEST_LINT    if set, python-flymake's linter command (fields separated by \x1f): the
;;                      driver waits for its diagnostics before running ACPLS_TEST_ACTION
;;   ACPLS_TEST_POINT   "LINE:COLUMN" (1-based line, 0-based column) to put point at, or empty
;;   ACPLS_TEST_AGENT   if set, the agent's argv (fields separated by \x1f) instead of the demo
;;   ACPLS_TEST_WATCH   files (separated by \x1f) whose buffers the report gives after the turn:
;;                      "buffers" maps each to its text and modified flag, or null (no buffer)
;;   ACPLS_TEST_NO_SAVE  if set, `acpls-save-edits' is nil (the agent's writes stay unsaved)
;;   ACPLS_TEST_AGENT_COPY  "PATH\x1fTEXT": the agent's own disk write of PATH (OpenCode's),
;;                      landing as acpls' first edit of PATH reaches Emacs, before Emacs visits
;;                      PATH (after acpls created it, empty, where eglot lacks resourceOperations)
;;   ACPLS_TEST_OUT     where to write the JSON report
;; The report says what the user would have seen: the turn's result or error, the permission
;; prompts and their choices, the documents shown (follow and transcript), the echo-area messages,
;; and the text of the opened file's buffer after the turn.

(require 'json)

(defvar drive--report nil "Alist written as JSON at the end.")
(defvar drive--turn nil "Set when the turn ends: (RESULT . ERROR).")
(defvar drive--prompts nil)
(defvar drive--shown nil)
(defvar drive--messages nil)

(defun drive--env (name &optional default)
  (let ((value (getenv name)))
    (if (or (null value) (string= value "")) default value)))

(defun drive--add (key value)
  (push (cons key value) drive--report))

(defun drive--tail (buffer)
  "The end of BUFFER's text, to tell why a test failed."
  (if (buffer-live-p buffer)
      (with-current-buffer buffer
        (buffer-substring-no-properties (max (point-min) (- (point-max) 6000)) (point-max)))
    ""))

(defun drive--finish (code)
  "Write the report and exit with CODE; on failure, add the LSP events and acpls' stderr."
  (unless (zerop code)
    (dolist (buffer (buffer-list))
      (let ((name (buffer-name buffer)))
        (cond ((string-match-p "stderr\\*\\'" name) (drive--add "stderr" (drive--tail buffer)))
              ((string-match-p "events\\*\\'" name) (drive--add "events" (drive--tail buffer)))))))
  (drive--add "prompts" (vconcat (reverse drive--prompts)))
  (drive--add "shown" (vconcat (reverse drive--shown)))
  (drive--add "messages" (vconcat (reverse drive--messages)))
  (with-temp-file (drive--env "ACPLS_TEST_OUT")
    (insert (json-encode drive--report)))
  (kill-emacs code))

(defun drive--watched-buffers ()
  "ACPLS_TEST_WATCH's files: each buffer's text and modified flag, or nil."
  (let ((watched (drive--env "ACPLS_TEST_WATCH")))
    (mapcar (lambda (path)
              (let ((buffer (find-buffer-visiting path)))
                (cons path (and buffer
                                (with-current-buffer buffer
                                  `(("text" . ,(buffer-substring-no-properties
                                                (point-min) (point-max)))
                                    ("modified" . ,(if (buffer-modified-p) t :json-false))))))))
            (and watched (split-string watched "\x1f")))))

(defun drive--wait (predicate seconds what)
  "Let Emacs run (process output, timers) until PREDICATE holds, at most SECONDS."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate)
      (drive--add "timeout" what)
      (drive--finish 3))))

;; eglot signals from the process sentinel when acpls dies, which ends a batch Emacs at once:
;; report it instead, with acpls' stderr.
(advice-add 'jsonrpc--process-sentinel :around
            (lambda (sentinel &rest args)
              (condition-case err
                  (apply sentinel args)
                (error (drive--add "lispError" (error-message-string err))
                       (drive--finish 2)))))

;; The user: answers the permission prompt, and nothing else may ask anything.
(setq completing-read-function
      (lambda (prompt collection &rest _)
        (let ((answer (drive--env "ACPLS_TEST_ANSWER")))
          (push `(("prompt" . ,prompt) ("choices" . ,(vconcat (all-completions "" collection)))
                  ("answer" . ,answer))
                drive--prompts)
          answer)))
(advice-add 'read-string :override
            (lambda (prompt &rest _) (error "unexpected question: %s" prompt)))
(advice-add 'y-or-n-p :override
            (lambda (prompt &rest _) (error "unexpected question: %s" prompt)))

;; What was shown: acpls' showDocument requests go through acpls--show.
(advice-add 'acpls--show :before
            (lambda (path selection take-focus)
              (push `(("path" . ,path)
                      ("line" . ,(and selection (plist-get (plist-get selection :start) :line)))
                      ("takeFocus" . ,(if take-focus t :json-false)))
                    drive--shown)))
(advice-add 'message :before
            (lambda (format-string &rest args)
              (when format-string
                (push (apply #'format-message format-string args) drive--messages))))

(add-hook 'acpls-after-turn-functions
          (lambda (result error) (setq drive--turn (cons result error))))

(let ((server (drive--env "ACPLS_TEST_SERVER")))
  (when server (setq acpls-command (split-string server "\x1f"))))
(setq acpls-agent
      (let ((agent (drive--env "ACPLS_TEST_AGENT")))
        (if agent
            (let ((argv (split-string agent "\x1f")))
              (list :command (car argv) :args (vconcat (cdr argv))))
          "demo")))
(when (drive--env "ACPLS_TEST_NO_SAVE") (setq acpls-save-edits nil))
(let ((copy (drive--env "ACPLS_TEST_AGENT_COPY")))
  (when copy
    (let ((path (car (split-string copy "\x1f")))
          (text (cadr (split-string copy "\x1f"))))
      (advice-add 'acpls--edit-buffers :before
                  (lambda (edit)
                    (when (and text (string-search (eglot--path-to-uri path) (format "%S" edit)))
                      (let ((coding-system-for-write 'utf-8-unix))
                        (write-region text nil path nil 'silent))
                      (setq text nil)))))))  ; once, as the agent writes once
(let ((version (drive--env "ACPLS_TEST_PROTOCOL")))
  (when version
    (setq acpls-protocol-version (if (member version '("1" "2")) (string-to-number version) version))))

(let ((lint (drive--env "ACPLS_TEST_LINT")))
  (when lint
    (require 'python)
    (setq python-flymake-command (split-string lint "\x1f"))))

(condition-case err
    (progn
      (find-file (drive--env "ACPLS_TEST_FILE"))
      (acpls-start)
      (drive--wait (lambda () (let ((server (eglot-current-server)))
                                (and server (eglot--capabilities server))))
                   30 "eglot connecting to acpls")
      (drive--add "server" (format "%s" (eieio-object-class-name (eglot-current-server))))
      (when (drive--env "ACPLS_TEST_LINT")
        (flymake-start)
        (drive--wait (lambda () (flymake-diagnostics)) 30 "the linter's Flymake diagnostics")
        (drive--add "flymakeBackends" (vconcat (mapcar (lambda (f) (format "%s" f))
                                                       flymake-diagnostic-functions))))
      (let ((point (drive--env "ACPLS_TEST_POINT")))
        (when point
          (let ((at (mapcar #'string-to-number (split-string point ":"))))
            (goto-char (point-min))
            (forward-line (1- (car at)))
            (forward-char (cadr at)))))
      (let ((region (drive--env "ACPLS_TEST_REGION")))
        (when region
          (let ((lines (mapcar #'string-to-number (split-string region ":"))))
            (goto-char (point-min))
            (forward-line (1- (car lines)))
            (push-mark (point) t t)
            (forward-line (- (cadr lines) (car lines)))
            (end-of-line)
            (setq transient-mark-mode t mark-active t))))
      (let ((action (drive--env "ACPLS_TEST_ACTION")))
        (cond
         ((and action (drive--env "ACPLS_TEST_EXECUTE"))
          ;; eglot 1.15+: code actions go through `eglot-execute' (see eglot_execute_shim.el).
          (let* ((server (eglot-current-server))
                 (actions (jsonrpc-request
                           server :textDocument/codeAction
                           (list :textDocument (eglot--TextDocumentIdentifier)
                                 :range (list :start (eglot--pos-to-lsp-position (region-beginning))
                                              :end (eglot--pos-to-lsp-position (region-end)))
                                 :context (list :diagnostics [])))))
            (eglot-execute server (cl-find action actions :test #'equal
                                           :key (lambda (a) (plist-get a :title))))))
         (action
            ;; As from the keyboard: eglot 1.9 pops up a mouse menu after a non-key event.
            (let ((completing-read-function (lambda (&rest _) action))
                  (last-nonmenu-event ?\r))
              (eglot-code-actions (if (use-region-p) (region-beginning) (point))
                                  (if (use-region-p) (region-end) (point))
                                  nil t)))
         (t (acpls-prompt (drive--env "ACPLS_TEST_PROMPT")))))
      (drive--wait (lambda () drive--turn) 90 "the end of the agent's turn")
      (drive--add "result" (car drive--turn))
      (drive--add "error" (cdr drive--turn))
      ;; acpls' window/showMessage at the turn end may arrive just after the result.
      (drive--wait (lambda () (cl-some (lambda (m) (string-match-p "finished" m)) drive--messages))
                   10 "acpls' turn-end message")
      (drive--add "buffer" (with-current-buffer (find-buffer-visiting (drive--env "ACPLS_TEST_FILE"))
                             (buffer-substring-no-properties (point-min) (point-max))))
      (drive--add "buffers" (drive--watched-buffers))
      (let ((transcript (cl-find-if (lambda (b) (acpls--transcript-p (or (buffer-file-name b) "")))
                                    (buffer-list))))
        (drive--add "transcriptBuffer"
                    (and transcript (with-current-buffer transcript
                                      `(("readOnly" . ,(if buffer-read-only t :json-false))
                                        ("autoRevert" . ,(if auto-revert-mode t :json-false)))))))
      (ignore-errors (eglot-shutdown (eglot-current-server)))
      (drive--finish 0))
  (error (drive--add "lispError" (error-message-string err))
         (drive--finish 2)))

;;; emacs_drive.el ends here
