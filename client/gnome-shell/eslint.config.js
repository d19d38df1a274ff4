// SPDX-License-Identifier: GPL-2.0-or-later
// ESLint flat config for the GNOME Shell extension: ES modules run by GJS
// inside gnome-shell 45 to 48. The rules follow GNOME Shell's own
// (lint/eslintrc-gjs.yml and lint/eslintrc-shell.yml in gnome-shell), with
// the layout rules taken from @stylistic, where ESLint moved them.
//
//   cd client/gnome-shell && npm install && npx eslint .

import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';

// What GJS and gnome-shell put in every module's scope. `_`, `C_`, `N_`
// and `ngettext` are left out on purpose: they are the shell's own domain;
// an extension imports gettext from extension.js for its own.
const gjsGlobals = {
    ARGV: 'readonly',
    Debugger: 'readonly',
    GIRepositoryGType: 'readonly',
    globalThis: 'readonly',
    imports: 'readonly',
    Intl: 'readonly',
    log: 'readonly',
    logError: 'readonly',
    print: 'readonly',
    printerr: 'readonly',
    console: 'readonly',
    TextEncoder: 'readonly',
    TextDecoder: 'readonly',
    setTimeout: 'readonly',
    setInterval: 'readonly',
    clearTimeout: 'readonly',
    clearInterval: 'readonly',
    // gnome-shell's Shell.Global
    global: 'readonly',
};

export default [
    {
        ignores: ['node_modules/**'],
    },
    js.configs.recommended,
    {
        files: ['**/*.js'],
        languageOptions: {
            ecmaVersion: 2022,
            sourceType: 'module',
            globals: gjsGlobals,
        },
        plugins: {
            '@stylistic': stylistic,
        },
        rules: {
            // What the code means.
            'array-callback-return': 'error',
            'camelcase': ['error', {properties: 'never', allow: ['^vfunc_', '^on_']}],
            'consistent-return': 'error',
            'curly': ['error', 'multi-or-nest', 'consistent'],
            'eqeqeq': ['error', 'smart'],
            'func-style': ['error', 'declaration', {allowArrowFunctions: true}],
            'no-await-in-loop': 'error',
            'no-implicit-coercion': ['error', {allow: ['!!']}],
            'no-lonely-if': 'error',
            'no-nested-ternary': 'error',
            'no-prototype-builtins': 'off',
            'no-restricted-globals': ['error', 'window'],
            // const X = GObject.registerClass(class X ...) names the class
            // twice on purpose: the shell's own pattern.
            // (ESLint's ignoreOnInitialization covers function expressions
            // only), so those names are allowed, and no other.
            'no-shadow': ['error', {allow: ['Daemon', 'LaptopModeIndicator', 'LaptopModeToggle']}],
            'no-throw-literal': 'error',
            'no-unneeded-ternary': 'error',
            'no-unused-expressions': 'error',
            'no-unused-vars': ['error', {
                varsIgnorePattern: '(^unused|_$)',
                argsIgnorePattern: '^(unused|_)',
                caughtErrors: 'none',
            }],
            'no-useless-concat': 'error',
            'no-useless-return': 'error',
            'object-shorthand': 'error',
            'prefer-arrow-callback': 'error',
            'prefer-const': 'error',
            'prefer-promise-reject-errors': 'error',
            'prefer-template': 'error',
            'require-await': 'error',

            // How it looks.
            '@stylistic/arrow-parens': ['error', 'as-needed'],
            '@stylistic/arrow-spacing': 'error',
            '@stylistic/block-spacing': 'error',
            '@stylistic/brace-style': 'error',
            '@stylistic/comma-dangle': ['error', {
                arrays: 'always-multiline',
                objects: 'always-multiline',
                imports: 'always-multiline',
                exports: 'always-multiline',
                functions: 'never',
            }],
            '@stylistic/comma-spacing': 'error',
            '@stylistic/eol-last': 'error',
            '@stylistic/indent': ['error', 4, {
                ignoredNodes: [
                    'CallExpression[callee.object.name=GObject][callee.property.name=registerClass] > ClassExpression:first-child',
                ],
                MemberExpression: 'off',
                // GNOME Shell's style: case labels level with their switch.
                SwitchCase: 0,
            }],
            '@stylistic/key-spacing': ['error', {mode: 'minimum', beforeColon: false, afterColon: true}],
            '@stylistic/keyword-spacing': 'error',
            '@stylistic/linebreak-style': ['error', 'unix'],
            '@stylistic/lines-between-class-members': ['error', 'always', {exceptAfterSingleLine: true}],
            '@stylistic/no-multiple-empty-lines': ['error', {max: 2}],
            '@stylistic/no-tabs': 'error',
            '@stylistic/no-trailing-spaces': 'error',
            '@stylistic/nonblock-statement-body-position': ['error', 'below'],
            '@stylistic/object-curly-spacing': 'error',
            '@stylistic/operator-linebreak': 'error',
            '@stylistic/padded-blocks': ['error', 'never'],
            '@stylistic/quotes': ['error', 'single', {avoidEscape: true}],
            '@stylistic/semi': ['error', 'always'],
            '@stylistic/space-before-blocks': 'error',
            '@stylistic/space-before-function-paren': ['error', {
                named: 'never',
                anonymous: 'always',
                asyncArrow: 'always',
            }],
            '@stylistic/space-in-parens': 'error',
            '@stylistic/space-infix-ops': 'error',
            '@stylistic/spaced-comment': 'error',
        },
    },
];
