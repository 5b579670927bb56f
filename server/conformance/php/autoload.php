<?php
// The class loader for the PHP SDK and its two libraries, in place of
// Composer's: each package's namespace maps to its source folder under
// KESSAI_PHP_SDK_DIR, laid out as README.md describes:
//
//   univapay-php-sdk/src  Univapay\    (PSR-0: Univapay\X\Y -> src/Univapay/X/Y.php)
//   requests/src          WpOrg\Requests\  (PSR-4)
//   money/src             Money\       (PSR-4)
//
// Nothing of the three packages is kept in this repository.

function kessai_php_sdk_dir(): string
{
    $dir = getenv('KESSAI_PHP_SDK_DIR');
    if ($dir === false || $dir === '') {
        fwrite(STDERR, "KESSAI_PHP_SDK_DIR is not set\n");
        exit(2);
    }
    return rtrim($dir, '/');
}

function kessai_register_autoloader(string $root): void
{
    // prefix => [folder, whether the prefix is part of the path (PSR-0)]
    $packages = [
        'Univapay\\' => ["$root/univapay-php-sdk/src", true],
        'WpOrg\\Requests\\' => ["$root/requests/src", false],
        'Money\\' => ["$root/money/src", false],
    ];
    foreach ($packages as $prefix => [$folder, $_]) {
        if (!is_dir($folder)) {
            fwrite(STDERR, "missing $folder: see server/conformance/php/README.md\n");
            exit(2);
        }
    }
    spl_autoload_register(function (string $class) use ($packages): void {
        foreach ($packages as $prefix => [$folder, $prefixInPath]) {
            if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
                continue;
            }
            $relative = $prefixInPath ? $class : substr($class, strlen($prefix));
            $file = $folder . '/' . str_replace('\\', '/', $relative) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    });
}

kessai_register_autoloader(kessai_php_sdk_dir());
